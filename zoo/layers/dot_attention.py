"""Luong's dot attention."""

import keras
from keras import ops

from zoo.layers.base_attention import BaseAttention
from zoo.layers.registry import register


@register("dot")
class DotAttention(BaseAttention):
    """Dot-product attention: `e_i = s^T h_i` (optionally `/ sqrt(d)`).

    Needs the query and the values to have the same size, `Dq == Dv`. It has no
    weights, so `precompute` is the identity.

    Args:
        scale: bool, divide the scores by `sqrt(Dv)` (the scaled dot product of
            Vaswani et al., 2017). False by default, as in Luong et al.
        dropout: dropout rate on the attention weights, 0 by default.

    Call arguments and shapes: see `BaseAttention`. query `(B, Dq)` or
    `(B, Tq, Dq)`, value `(B, Tv, Dv)`, mask bool `(B, Tv)`.

    Example:
    >>> layer = zoo.layers.DotAttention()
    >>> context, weights = layer(np.ones((2, 8)), np.ones((2, 5, 8)))
    >>> tuple(context.shape), tuple(weights.shape)
    ((2, 8), (2, 5))

    Reference: Luong, Pham, Manning, "Effective Approaches to Attention-based
    Neural Machine Translation", EMNLP 2015, section 3.1 ("dot").
    """

    def __init__(self, scale=False, dropout=0.0, **kwargs):
        super().__init__(dropout=dropout, **kwargs)
        if not isinstance(scale, bool):
            raise TypeError(f"DotAttention: `scale` must be True or False, received scale={scale!r}.")
        self.scale = scale

    def build_projections(self, query_dim, value_dim):
        if query_dim != value_dim:
            raise ValueError(
                f"{self.name}: dot attention needs query and value of the same size, "
                f"received query dim {query_dim} and value dim {value_dim}; use "
                f"GeneralAttention to score vectors of different sizes."
            )
        self._value_dim = value_dim

    dot_product_score = True

    def score(self, query, keys):
        return self.dot_scores(self.score_query(query), keys)  # (B, Tq, Tv)

    def score_query(self, query):
        self._check_built("score_query")
        if self.scale:
            return query / ops.cast(ops.sqrt(float(self._value_dim)), query.dtype)
        return query

    def get_config(self):
        config = super().get_config()
        config.update({"scale": self.scale})
        return config
