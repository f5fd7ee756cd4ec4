"""Reduced-rank multiplicative attention."""

import numbers

import keras
from keras import ops

from zoo.layers.base_attention import BaseAttention
from zoo.layers.linear import linear
from zoo.layers.registry import register


@register("reduced_rank")
class ReducedRankAttention(BaseAttention):
    """Low-rank multiplicative attention: `e_i = (Q s)^T (R h_i)`.

    The bilinear form `s^T W h` with `W = Q^T R` of rank at most `rank`: with
    `rank << min(Dq, Dv)` it needs `rank * (Dq + Dv)` weights instead of
    `Dq * Dv`, and each decoding step costs `rank` multiply-adds per source
    position. `Q` `(rank, Dq)` and `R` `(rank, Dv)` are stored transposed as
    `query_kernel` `(Dq, rank)` and `value_kernel` `(Dv, rank)`;
    `precompute(h) = h @ value_kernel`.

    Args:
        rank: int > 0, the rank of the bilinear form.
        kernel_initializer: initializer of both kernels, "glorot_uniform" by default.
        dropout: dropout rate on the attention weights, 0 by default.

    Call arguments and shapes: see `BaseAttention`. query `(B, Dq)` or
    `(B, Tq, Dq)`, value `(B, Tv, Dv)`, mask bool `(B, Tv)`.

    Example:
    >>> layer = zoo.layers.ReducedRankAttention(rank=4)
    >>> context, weights = layer(np.ones((2, 16)), np.ones((2, 5, 8)))
    >>> tuple(context.shape), tuple(weights.shape)
    ((2, 8), (2, 5))

    Reference: the low-rank bilinear attention of the "Attention" lecture of
    Stanford CS224n (2019, Manning and Abigail See), which factors Luong's
    general attention `W` as `U^T V`; see also Kim et al., "Hadamard Product for
    Low-rank Bilinear Pooling", ICLR 2017.
    """

    def __init__(self, rank, kernel_initializer="glorot_uniform", dropout=0.0, **kwargs):
        super().__init__(dropout=dropout, **kwargs)
        if not isinstance(rank, numbers.Integral) or isinstance(rank, bool) or rank <= 0:
            raise ValueError(
                f"ReducedRankAttention: `rank` must be a positive integer, received rank={rank!r}."
            )
        self.rank = int(rank)
        self.kernel_initializer = keras.initializers.get(kernel_initializer)

    def build_projections(self, query_dim, value_dim):
        self.query_kernel = self.add_weight(
            name="query_kernel", shape=(query_dim, self.rank), initializer=self.kernel_initializer
        )
        self.value_kernel = self.add_weight(
            name="value_kernel", shape=(value_dim, self.rank), initializer=self.kernel_initializer
        )

    def precompute(self, value):
        self._check_precompute(value)
        return ops.matmul(self._cast(value), self._cast(self.value_kernel))  # (B, Tv, rank)

    dot_product_score = True

    def score(self, query, keys):
        return self.dot_scores(self.score_query(query), keys)  # (B, Tq, Tv)

    def score_query(self, query):
        self._check_built("score_query")
        return linear(self._cast(query), self._cast(self.query_kernel))  # (B, Tq, rank)

    def keys_dim(self, query_dim, value_dim):
        return self.rank

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "rank": self.rank,
                "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
            }
        )
        return config
