"""Bahdanau's additive attention."""

import keras
from keras import ops

from zoo.layers.base_attention import BaseAttention
from zoo.layers.concat_attention import check_units, tanh_score
from zoo.layers.linear import linear
from zoo.layers.registry import register


@register("additive", "bahdanau")
class AdditiveAttention(BaseAttention):
    """Additive attention: `e_i = v^T tanh(W1 h_i + W2 s)`.

    `W1` `(units, Dv)` and `W2` `(units, Dq)` are stored transposed as
    `value_kernel` `(Dv, units)` and `query_kernel` `(Dq, units)`, `v` as
    `score_vector` `(units,)`. `precompute(h) = h @ value_kernel` (Bahdanau's
    `U_a h_j`, "can be pre-computed", appendix A.1.2) runs once per sentence.

    Args:
        units: int > 0, the size of the hidden layer of the score (n' in the paper).
        kernel_initializer: initializer of the kernels and `score_vector`.
        dropout: dropout rate on the attention weights, 0 by default.

    Call arguments and shapes: see `BaseAttention`. query `(B, Dq)` or
    `(B, Tq, Dq)`, value `(B, Tv, Dv)`, mask bool `(B, Tv)`. A 3D query builds a
    `(B, Tq, Tv, units)` intermediate.

    Example:
    >>> layer = zoo.layers.AdditiveAttention(units=32)
    >>> context, weights = layer(np.ones((2, 16)), np.ones((2, 5, 8)))
    >>> tuple(context.shape), tuple(weights.shape)
    ((2, 8), (2, 5))

    Reference: Bahdanau, Cho, Bengio, "Neural Machine Translation by Jointly
    Learning to Align and Translate", ICLR 2015, appendix A.1.2.
    """

    def __init__(self, units, kernel_initializer="glorot_uniform", dropout=0.0, **kwargs):
        super().__init__(dropout=dropout, **kwargs)
        self.units = check_units("AdditiveAttention", units)
        self.kernel_initializer = keras.initializers.get(kernel_initializer)

    def build_projections(self, query_dim, value_dim):
        self.value_kernel = self.add_weight(
            name="value_kernel", shape=(value_dim, self.units), initializer=self.kernel_initializer
        )
        self.query_kernel = self.add_weight(
            name="query_kernel", shape=(query_dim, self.units), initializer=self.kernel_initializer
        )
        self.score_vector = self.add_weight(
            name="score_vector", shape=(self.units,), initializer=self.kernel_initializer
        )

    def precompute(self, value):
        self._check_precompute(value)
        return ops.matmul(self._cast(value), self._cast(self.value_kernel))  # (B, Tv, units)

    def score(self, query, keys):
        self._check_built("score")
        projected = linear(self._cast(query), self._cast(self.query_kernel))  # (B, Tq, units)
        return tanh_score(keys, projected, self._cast(self.score_vector))  # (B, Tq, Tv)

    def keys_dim(self, query_dim, value_dim):
        return self.units

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "units": self.units,
                "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
            }
        )
        return config


BahdanauAttention = AdditiveAttention
