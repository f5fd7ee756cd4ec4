"""The shared machinery of every attention variant: masking, softmax, weighted sum."""

import functools
import numbers

import keras
from keras import ops

try:  # the mask Keras attaches to a tensor (Embedding(mask_zero=True)); not exported by keras itself
    from keras.src.backend.common.masking import get_keras_mask
except ImportError:  # pragma: no cover - an older Keras 3 kept it as an attribute only
    def get_keras_mask(x):
        return getattr(x, "_keras_mask", None)

# Masked scores are set to float32's lowest finite value before the softmax, which runs in float32
# or wider (so the constant is safe whatever the compute dtype; -1e9 lost to real scores below it),
# then multiplied by the mask so that masked weights are exactly 0.
_MASKED_SCORE = -3.4028234663852886e38
_FLOAT16_MAX = 65504.0


class BaseAttention(keras.layers.Layer):
    """Base class of the attention layers: subclasses override only the score.

    Given a query `s` and values `h_1..h_Tv`, a subclass defines the score
    `e_i = score(s, h_i)`; this class turns the scores into weights
    `a = softmax(e)` over the real (unmasked) values and returns the context
    `c = sum_i a_i h_i`.

    Subclasses implement:
      - `build_projections(query_dim, value_dim)`: create the weights.
      - `precompute(value)`: the value-side part of the score, `(B, Tv, Dv) ->
        (B, Tv, Dk)`; the identity by default. Decoders call it once per sentence
        and pass the result as `keys=` at every step.
      - `score(query, keys)`: `(B, Tq, Dq), (B, Tv, Dk) -> (B, Tq, Tv)`.
      - optionally, when the score is a dot product with the keys (`dot_product_score =
        True`), `score_query(query)`: `score(q, K) = dot_scores(score_query(q), K)`.

    `precompute`, `score` and `score_query` given a symbolic tensor (a functional model
    being built) call the layer with `method=` their name instead: a node of the layer,
    whose result reads the weights every time the model runs (computed on the spot it
    would hold the weights of that moment as constants: never trained).

    Args:
        dropout: float in [0, 1), dropout rate on the attention weights during
            training. 0 (no dropout) by default, as in the papers.
        **kwargs: standard `keras.layers.Layer` arguments (`name`, `dtype`, ...).

    Call arguments:
        query: `(B, Dq)` for one decoder step or `(B, Tq, Dq)` for all steps.
        value: `(B, Tv, Dv)`, the encoder outputs.
        mask: optional bool `(B, Tv)`, True for real tokens (numbers: nonzero). Masked positions get
            weight exactly 0; a row with no real token gets all-zero weights and a
            zero context. Without it, the mask Keras attached to `value` (an
            `Embedding(mask_zero=True)` before it) is used, and the query's own is passed on
            to both outputs.
        keys: optional `(B, Tv, Dk)`, the result of `precompute(value)`, to skip
            re-projecting the values at every decoding step.
        training: bool, whether dropout is active.
        method: None, or "precompute" (returns `precompute(value)`), "score"
            (`score(query, value)`, `value` holding the keys) or "score_query"
            (`score_query(query)`): the nodes those methods add to a functional model.

    Returns:
        `(context, weights)`: `(B, Dv)` and `(B, Tv)` for a 2D query;
        `(B, Tq, Dv)` and `(B, Tq, Tv)` for a 3D query.
    """

    def __init__(self, dropout=0.0, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(dropout, numbers.Real) or isinstance(dropout, bool) or not 0.0 <= float(dropout) < 1.0:
            raise ValueError(
                f"{type(self).__name__}: `dropout` must be in [0, 1), received dropout={dropout!r}."
            )
        self.dropout = float(dropout)
        self._dropout_layer = keras.layers.Dropout(self.dropout, dtype=self.dtype_policy)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for name in _METHODS:  # a subclass's own methods, symbolic tensors included
            if name in cls.__dict__:
                setattr(cls, name, _node_when_symbolic(cls.__dict__[name]))

    # -- to override -------------------------------------------------------------
    def build_projections(self, query_dim, value_dim):
        """Creates the score's weights; nothing by default."""

    def precompute(self, value):
        """Returns the value-side part of the score, `(B, Tv, Dv) -> (B, Tv, Dk)`."""
        return value

    def keys_dim(self, query_dim, value_dim):
        """Dk, the last dimension of `precompute`'s keys for a layer built for `query_dim` and `value_dim`."""
        return value_dim

    def score(self, query, keys):
        """Returns the scores `(B, Tq, Tv)` for `query (B, Tq, Dq)`, `keys (B, Tv, Dk)`."""
        raise NotImplementedError

    dot_product_score = False  # True: `score(q, K) = dot_scores(score_query(q), K)`

    def score_query(self, query):
        """`(B, Tq, Dq) -> (B, Tq, Dk)`: the query side of a dot-product score."""
        raise NotImplementedError(f"{type(self).__name__}'s score is not a dot product with the keys.")

    # -- shared ------------------------------------------------------------------
    @staticmethod
    def dot_scores(query, keys):
        """`(B, Tq, D), (B, Tv, D) -> (B, Tq, Tv)`: the dot products of every query and key.

        One batched product that reads `keys` transposed in place: a decoding step does not
        copy the keys of the whole sentence into a transposed tensor (nor its gradient back).
        In float16, whose largest value is 65504, the sums run in float32 and are held within that
        range: an overflowing score would make the weights NaN.
        """
        if keras.backend.standardize_dtype(query.dtype) != "float16":
            return ops.einsum("bqd,bvd->bqv", query, keys)
        scores = ops.einsum("bqd,bvd->bqv", ops.cast(query, "float32"), ops.cast(keys, "float32"))
        return ops.cast(ops.clip(scores, -_FLOAT16_MAX, _FLOAT16_MAX), "float16")

    def build(self, query_shape, value_shape, mask_shape=None, keys_shape=None):
        query_shape = tuple(query_shape)
        value_shape = tuple(value_shape)
        if len(query_shape) not in (2, 3):
            raise ValueError(f"{self.name}: query must have shape (B, Dq) or (B, Tq, Dq), received shape {query_shape}.")
        if len(value_shape) != 3:
            raise ValueError(f"{self.name}: value must have shape (B, Tv, Dv), received shape {value_shape}.")
        if query_shape[-1] is None or value_shape[-1] is None:
            raise ValueError(f"{self.name}: the last dimension of query and value must be known, "
                             f"received query {query_shape} and value {value_shape}.")
        self.build_projections(int(query_shape[-1]), int(value_shape[-1]))
        self._built_dims = (int(query_shape[-1]), int(value_shape[-1]))
        self._dropout_layer.build(None)
        self.built = True

    def _cast(self, x):
        # Outside __call__ (e.g. precompute) Keras autocasts neither variables nor inputs.
        return ops.cast(x, self.compute_dtype)

    def _check_built(self, method):
        if not self.built:
            raise ValueError(
                f"{self.name}: call the layer once (or `build(query_shape, value_shape)`) "
                f"before `{method}`; it was called on an unbuilt layer."
            )

    def _check_precompute(self, value):
        """`precompute`'s checks: a built layer, and a value `(B, Tv, Dv)` of the size it was built for (the
        backend's matmul would fail with its own words, or a value `(B, Dv)` give keys of the wrong rank)."""
        self._check_built("precompute")
        shape, dim = tuple(value.shape), self._built_dims[1]
        if len(shape) != 3 or shape[-1] not in (None, dim):
            raise ValueError(f"{self.name}: value must have shape (B, Tv, {dim}) (the layer was built for value "
                             f"(..., {dim})), received shape {shape}.")

    def _check_mask(self, mask, value):
        if not (hasattr(mask, "dtype") and hasattr(mask, "shape")):  # e.g. Keras Attention's [query_mask, value_mask]
            raise TypeError(f"{self.name}: mask must be one tensor (B, Tv) over the values (the layer takes no "
                            f"query mask), received a {type(mask).__name__}.")
        dtype = keras.backend.standardize_dtype(mask.dtype)
        if dtype != "bool" and not ("int" in dtype or "float" in dtype):
            raise TypeError(f"{self.name}: mask must be bool (or 0/1 numbers), received dtype {dtype}.")
        mask_shape, value_shape = tuple(mask.shape), tuple(value.shape)
        if len(mask_shape) != 2 or any(m is not None and v is not None and m != v
                                       for m, v in zip(mask_shape, value_shape[:2])):
            raise ValueError(f"{self.name}: mask must be bool with shape (B, Tv) = {value_shape[:2]} "
                             f"matching value {value_shape}, received mask of shape {mask_shape}.")

    def _check_inputs(self, query, value, keys):
        """Ranks, then batches (`_check_batches`), then the sizes the layer was built for: a ValueError
        naming the input and the shapes, where einsum would fail deep inside the backend."""
        shapes = {"query": tuple(query.shape), "value": tuple(value.shape)}
        if keys is not None:
            shapes["keys"] = tuple(keys.shape)
        for name, ranks, form in (("query", (2, 3), "(B, Dq) or (B, Tq, Dq)"), ("value", (3,), "(B, Tv, Dv)"),
                                  ("keys", (3,), "(B, Tv, Dk)")):
            if name in shapes and len(shapes[name]) not in ranks:
                raise ValueError(f"{self.name}: {name} must have shape {form}, received shape {shapes[name]}.")
        self._check_batches(query, value, keys)
        dims = getattr(self, "_built_dims", None)
        if dims is None:
            return
        expected = {"query": dims[0], "value": dims[1], "keys": self.keys_dim(*dims)}
        for name, shape in shapes.items():
            if shape[-1] is not None and shape[-1] != expected[name]:
                raise ValueError(
                    f"{self.name}: {name} must have last dimension {expected[name]} (the layer was built for "
                    f"query (..., {dims[0]}) and value (..., {dims[1]})), received {name} of shape {shape}."
                )

    def _check_batches(self, query, value, keys):
        """A batch (or keys' length) that differs where both are known: a ValueError naming the
        shapes, where einsum would fail deep inside the backend, or broadcast a batch of one."""
        value_shape = tuple(value.shape)
        others = [("query", tuple(query.shape), 1)] + ([] if keys is None else [("keys", tuple(keys.shape), 2)])
        for name, shape, axes in others:
            if any(a is not None and b is not None and a != b for a, b in zip(shape[:axes], value_shape[:axes])):
                what = "batch size" if axes == 1 else "(B, Tv)"
                raise ValueError(
                    f"{self.name}: {name} and value must have the same {what}, received {name} of "
                    f"shape {shape} and value of shape {value_shape}."
                )

    def call(self, query, value, mask=None, keys=None, training=None, method=None, value_mask=None):
        mask = value_mask if mask is None else mask  # Keras fills `value_mask` in from value's own (Embedding's)
        if method is not None:  # the result twice: every node of the layer has two outputs (see `_node_when_symbolic`)
            result = self._method(method)(*_METHODS[method](query, value))
            return result, result
        self._check_inputs(query, value, keys)
        single_step = len(query.shape) == 2
        if single_step:
            query = ops.expand_dims(query, 1)  # (B, 1, Dq)
        if keys is None:
            keys = self.precompute(value)  # (B, Tv, Dk)
        context, weights = self.attend(self.score(query, keys), value, mask=mask, training=training)
        if single_step:
            return ops.squeeze(context, 1), ops.squeeze(weights, 1)
        return context, weights

    def attend(self, scores, value, mask=None, training=None):
        """`(context (B, Tq, Dv), weights (B, Tq, Tv))` from `scores (B, Tq, Tv)`: the masked
        softmax and the weighted sum of `call`, for a caller that computed the scores itself."""
        # Half precision would overflow in the softmax; float32 and float64 keep their own.
        half = self.compute_dtype in ("float16", "bfloat16")
        softmax_dtype = "float32" if half else self.compute_dtype
        scores = ops.cast(scores, softmax_dtype)
        if mask is not None:
            self._check_mask(mask, value)
            mask = ops.expand_dims(ops.cast(mask, "bool"), 1)  # (B, 1, Tv)
            scores = ops.where(mask, scores, _MASKED_SCORE)
        weights = ops.softmax(scores, axis=-1)
        if mask is not None:
            weights = weights * ops.cast(mask, softmax_dtype)  # exact zeros, all-masked rows too
        weights = ops.cast(weights, self.compute_dtype)
        weights = self._dropout_layer(weights, training=training)
        return ops.matmul(weights, value), weights  # (B, Tq, Dv), (B, Tq, Tv)

    def compute_output_spec(self, query, value, mask=None, keys=None, training=None, method=None, value_mask=None):
        if method is None:
            return super().compute_output_spec(query, value, mask=mask, keys=keys, training=training,
                                               value_mask=value_mask)
        self._method(method)
        keys_dim = self.keys_dim(*self._built_dims)
        shape = {"precompute": value.shape[:-1] + (keys_dim,), "score_query": query.shape[:-1] + (keys_dim,),
                 "score": query.shape[:-1] + value.shape[1:2]}[method]
        return tuple(keras.KerasTensor(tuple(shape), dtype=self.compute_dtype) for _ in range(2))

    def _method(self, method):
        if method not in _METHODS:
            raise ValueError(f"{self.name}: method must be None or one of {sorted(_METHODS)}, received {method!r}.")
        return getattr(self, method)

    def compute_output_shape(self, query_shape, value_shape, mask_shape=None, keys_shape=None):
        context_shape = tuple(query_shape[:-1]) + (value_shape[-1],)
        weights_shape = tuple(query_shape[:-1]) + (value_shape[1],)
        return context_shape, weights_shape

    def compute_mask(self, query, previous_mask=None):
        """The query's own Keras mask (its padded positions) on both outputs, as `keras.layers.Attention`
        passes it on: a loss after the layer then leaves padded target positions out."""
        query_mask = get_keras_mask(query)
        return None if query_mask is None else (query_mask, query_mask)

    def get_config(self):
        config = super().get_config()
        config.update({"dropout": self.dropout})
        return config


# The methods that may run outside a call, and the arguments a call with `method=` passes them from (query, value).
_METHODS = {
    "precompute": lambda query, value: (value,),
    "score": lambda query, value: (query, value),
    "score_query": lambda query, value: (query,),
}


def _node_when_symbolic(method):
    """`method` (one of `_METHODS`) that, given a symbolic tensor (a functional model being built), calls
    the layer with `method=` its name instead: a node of the layer, whose result reads the weights every
    time the model runs (computed here, it would hold the weights of this moment as constants: never
    trained, and on JAX arrays that training deletes). The node answers its result twice, as
    `(context, weights)` are two: Keras checks a functional model's outputs against the number of
    outputs of a layer's first node, so a one-output node first left the weights of a later call
    "not connected to inputs"."""
    name = method.__name__

    @functools.wraps(method)
    def wrapper(self, *arguments):
        if not any(keras.backend.is_keras_tensor(x) for x in arguments):
            return method(self, *arguments)
        if name == "precompute":
            self._check_precompute(*arguments)
            return self(arguments[0], arguments[0], method=name)[0]
        self._check_built(name)
        return self(arguments[0], arguments[-1], method=name)[0]

    return wrapper
