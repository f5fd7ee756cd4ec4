"""Luong's general (multiplicative) attention."""

import keras
from keras import ops

from zoo.layers.base_attention import BaseAttention
from zoo.layers.registry import register


@register("general", "multiplicative")
class GeneralAttention(BaseAttention):
    """Multiplicative attention: `e_i = s^T W h_i`.

    `W` has shape `(Dq, Dv)` in the equation; it is stored transposed as
    `kernel` `(Dv, Dq)` so that `precompute(h) = h @ kernel = (W h_i)_i`, the
    value side computed once per sentence, and each step costs one dot product
    per source position.

    Args:
        kernel_initializer: initializer of `kernel`, "glorot_uniform" by default.
        dropout: dropout rate on the attention weights, 0 by default.

    Call arguments and shapes: see `BaseAttention`. query `(B, Dq)` or
    `(B, Tq, Dq)`, value `(B, Tv, Dv)`, mask bool `(B, Tv)`.

    Example:
    >>> layer = zoo.layers.GeneralAttention()
    >>> context, weights = layer(np.ones((2, 4, 16)), np.ones((2, 5, 8)))
    >>> tuple(context.shape), tuple(weights.shape)
    ((2, 4, 8), (2, 4, 5))

    Reference: Luong, Pham, Manning, "Effective Approaches to Attention-based
    Neural Machine Translation", EMNLP 2015, section 3.1 ("general").
    """

    def __init__(self, kernel_initializer="glorot_uniform", dropout=0.0, **kwargs):
        super().__init__(dropout=dropout, **kwargs)
        self.kernel_initializer = keras.initializers.get(kernel_initializer)

    def build_projections(self, query_dim, value_dim):
        self.kernel = self.add_weight(
            name="kernel", shape=(value_dim, query_dim), initializer=self.kernel_initializer
        )

    def precompute(self, value):
        self._check_precompute(value)
        return ops.matmul(self._cast(value), self._cast(self.kernel))  # (B, Tv, Dq)

    dot_product_score = True

    def keys_dim(self, query_dim, value_dim):
        return query_dim

    def score(self, query, keys):
        return self.dot_scores(self._cast(query), keys)  # (B, Tq, Tv)

    def score_query(self, query):
        return query

    def get_config(self):
        config = super().get_config()
        config.update({"kernel_initializer": keras.initializers.serialize(self.kernel_initializer)})
        return config


MultiplicativeAttention = GeneralAttention
