"""Luong's concat attention."""

import numbers

import keras
from keras import ops

from zoo.layers.base_attention import BaseAttention
from zoo.layers.linear import linear
from zoo.layers.registry import register


def tanh_score(keys, projected_query, score_vector):
    """`v^T tanh(k_i + q)` for every query and key: `(B, Tv, U), (B, Tq, U), (U,) -> (B, Tq, Tv)`.

    The score shared by concat attention (`W [h; s] = W_h h + W_s s`) and additive attention.
    """
    hidden = ops.tanh(ops.expand_dims(keys, 1) + ops.expand_dims(projected_query, 2))  # (B, Tq, Tv, U)
    return linear(hidden, score_vector)


def check_units(layer_name, units):
    if not isinstance(units, numbers.Integral) or isinstance(units, bool) or units <= 0:
        raise ValueError(f"{layer_name}: `units` must be a positive integer, received units={units!r}.")
    return int(units)


@register("concat")
class ConcatAttention(BaseAttention):
    """Concat attention: `e_i = v^T tanh(W [h_i; s])`.

    `W` `(units, Dv + Dq)` is stored transposed as `kernel` `(Dv + Dq, units)`,
    `v` as `score_vector` `(units,)`. Because `W [h; s] = W_h h + W_s s`, the value
    half `h @ kernel[:Dv]` is what `precompute` returns, once per sentence.

    Args:
        units: int > 0, the size of the hidden layer of the score.
        kernel_initializer: initializer of `kernel` and `score_vector`.
        dropout: dropout rate on the attention weights, 0 by default.

    Call arguments and shapes: see `BaseAttention`. query `(B, Dq)` or
    `(B, Tq, Dq)`, value `(B, Tv, Dv)`, mask bool `(B, Tv)`. A 3D query builds a
    `(B, Tq, Tv, units)` intermediate.

    Example:
    >>> layer = zoo.layers.ConcatAttention(units=32)
    >>> context, weights = layer(np.ones((2, 16)), np.ones((2, 5, 8)))
    >>> tuple(context.shape), tuple(weights.shape)
    ((2, 8), (2, 5))

    Reference: Luong, Pham, Manning, "Effective Approaches to Attention-based
    Neural Machine Translation", EMNLP 2015, section 3.1 ("concat").
    """

    def __init__(self, units, kernel_initializer="glorot_uniform", dropout=0.0, **kwargs):
        super().__init__(dropout=dropout, **kwargs)
        self.units = check_units("ConcatAttention", units)
        self.kernel_initializer = keras.initializers.get(kernel_initializer)

    def build_projections(self, query_dim, value_dim):
        self._value_dim = value_dim
        self.kernel = self.add_weight(
            name="kernel", shape=(value_dim + query_dim, self.units), initializer=self.kernel_initializer
        )
        self.score_vector = self.add_weight(
            name="score_vector", shape=(self.units,), initializer=self.kernel_initializer
        )

    def precompute(self, value):
        self._check_precompute(value)
        return ops.matmul(self._cast(value), self._cast(self.kernel[: self._value_dim]))  # (B, Tv, units)

    def score(self, query, keys):
        self._check_built("score")
        projected = linear(self._cast(query), self._cast(self.kernel[self._value_dim :]))  # (B, Tq, units)
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
