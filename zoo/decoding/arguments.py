"""Checks of the decoding API's arguments, shared by the strategies, `decode` and `sequence_log_prob`.

A Python value is checked when a strategy is made or a batch is traced, with a TypeError or
ValueError that names the argument; a run-time tensor (an export's `beam_width`, a `source_ids`
batch in a `tf.function`) gets a graph assertion with the same words, so a wrong value never
decodes silently (a float width cut to an int, a negative token id read as one from the end).
"""

import numbers

import numpy as np
import tensorflow as tf

from zoo.constants import FLOAT32_MAX, INT32_MAX, MAX_LENGTH_PENALTY


def _is_number(value, integer):
    """Whether `value` is an int (any integer type, not a bool), or for `integer=False` any real number,
    as a Python scalar, a numpy value or array, or a tensor."""
    if isinstance(value, (bool, np.bool_)) or value is None:
        return False
    if isinstance(value, numbers.Integral) or (not integer and isinstance(value, numbers.Real)):
        return True
    try:
        dtype = tf.as_dtype(value.dtype)
    except (AttributeError, TypeError):
        return False
    return dtype.is_integer or (not integer and dtype.is_floating)


def check_number(value, name, integer=False, finite=False, scalar=False):
    """Raises a TypeError unless `value` is a number (an integer when `integer`), and a ValueError
    when it is a known NaN (or a known infinity when `finite`), or not a scalar when `scalar`."""
    if not _is_number(value, integer):
        kind = "an integer" if integer else "a number"
        raise TypeError(f"{name} must be {kind} (a Python value or a tensor), received {value!r}.")
    rank = getattr(getattr(value, "shape", ()), "rank", np.ndim(value))
    if scalar and rank not in (0, None):
        raise ValueError(f"{name} must be a scalar, received shape {tuple(value.shape)}.")
    static = None if integer else tf.get_static_value(value)
    if static is None:
        return
    values = np.asarray(static, np.float64)
    if np.any(np.isnan(values)):
        raise ValueError(f"{name} must not be NaN, received {static!r}.")
    if finite and np.any(np.isinf(values)):
        raise ValueError(f"{name} must be finite, received {static!r}.")
    if np.any(np.isfinite(values) & (np.abs(values) > FLOAT32_MAX)):  # a double the float32 search cannot hold
        raise ValueError(f"{name} must fit float32 (at most {FLOAT32_MAX:.7g} in magnitude), received {static!r}.")


def assert_number(value, name, finite=False, largest=None):
    """The run-time half of `check_number` for a float tensor whose value is not known while tracing:
    a graph assertion that it is not NaN (nor infinite when `finite`, nor above `largest` in magnitude
    when given); nothing for a known value. Strategies call it once per batch (in `start`), where
    `tf.function` runs every assertion."""
    if tf.get_static_value(value) is not None:
        return
    value = tf.cast(value, tf.float32)
    good = tf.math.is_finite(value) if finite else tf.logical_not(tf.math.is_nan(value))
    words = "finite" if finite else "a number, not NaN"
    if largest is not None:
        good &= tf.abs(value) <= largest
        words = f"between -{largest} and {largest}"
    tf.debugging.assert_equal(tf.reduce_all(good), True, message=f"{name} must be {words}")


def check_penalties(length_penalty, coverage_penalty):
    """The GNMT penalties of a strategy: finite scalars, and a known coverage penalty >= 0 (the stopping
    bound of beam search, and the meaning of the penalty, take it to be <= 0)."""
    check_number(length_penalty, "length_penalty", finite=True, scalar=True)
    check_number(coverage_penalty, "coverage_penalty", finite=True, scalar=True)
    alpha = tf.get_static_value(length_penalty)
    if alpha is not None and np.any(np.abs(np.asarray(alpha, np.float64)) > MAX_LENGTH_PENALTY):
        raise ValueError(
            f"length_penalty must be between -{MAX_LENGTH_PENALTY} and {MAX_LENGTH_PENALTY} (a larger one overflows the"
            f" length penalty's float32 divisor, and every score would tie), received {alpha!r}."
        )
    beta = tf.get_static_value(coverage_penalty)
    if beta is not None and np.any(np.asarray(beta) < 0):
        raise ValueError(
            f"coverage_penalty must be >= 0 (the stopping bound assumes the penalty is <= 0), received {beta!r}."
        )


def assert_penalties(length_penalty, coverage_penalty):
    """The run-time half of `check_penalties`: both finite, the length penalty within +-`MAX_LENGTH_PENALTY`
    (graph assertions when not known while tracing)."""
    assert_number(length_penalty, "length_penalty", finite=True, largest=MAX_LENGTH_PENALTY)
    assert_number(coverage_penalty, "coverage_penalty", finite=True)


def per_sentence(value, batch_size, name):
    """`value`, a scalar or one value per sentence `(B,)`, broadcast to `(B,)`; any other shape is a
    ValueError naming `name` (a graph assertion when the shapes are known only at run time)."""
    value = tf.convert_to_tensor(value)
    shape = value.shape
    if shape.rank is not None and shape.rank > 1:
        raise ValueError(f"{name} must be a scalar or one value per sentence, received shape {tuple(shape)}.")
    static_batch = tf.get_static_value(batch_size)
    if shape.rank == 1 and shape[0] is not None and static_batch is not None and shape[0] not in (1, static_batch):
        raise ValueError(f"{name} must be a scalar or one value per sentence ({static_batch}), "
                         f"received {shape[0]} values.")
    if shape.rank == 0:
        return tf.broadcast_to(value, [batch_size])
    size = tf.size(value)
    check = tf.debugging.assert_equal((size == 1) | (size == batch_size), True,
                                      message=f"{name} must be a scalar or one value per sentence")
    with tf.control_dependencies([check]):
        return tf.broadcast_to(tf.reshape(value, [-1]), [batch_size])


def static_int(value, name, minimum=None):
    """`value` as a Python int when it is known while tracing, else an int32 scalar tensor.

    Args:
        value: an integer scalar (Python, numpy or tensor); a float, bool or string is a TypeError.
        name: the argument's name, for the errors.
        minimum: None, or the least value allowed: a ValueError for a known value below it, a graph
            assertion for a run-time one.
    """
    check_number(value, name, integer=True)
    static = tf.get_static_value(value)
    if static is None:
        value = tf.reshape(value, [])
        checks = [] if minimum is None else [
            tf.debugging.assert_greater_equal(value, tf.cast(minimum, value.dtype), message=f"{name} must be >= {minimum}")]
        if value.dtype.max > INT32_MAX:  # an int64 (or unsigned) tensor, checked before it is cut to int32
            checks.append(tf.debugging.assert_less_equal(value, tf.cast(INT32_MAX, value.dtype),
                                                         message=f"{name} must be at most {INT32_MAX}"))
        if not checks:
            return tf.cast(value, tf.int32)
        with tf.control_dependencies(checks):  # identity: a cast to the same dtype adds no op to depend on
            return tf.identity(tf.cast(value, tf.int32))
    if getattr(static, "size", 1) != 1:
        raise ValueError(f"{name} must be a scalar, received shape {getattr(static, 'shape', None)}.")
    result = int(static.item() if hasattr(static, "item") else static)
    if minimum is not None and result < minimum:
        raise ValueError(f"{name} must be >= {minimum}, received {result}.")
    if result > INT32_MAX:
        raise ValueError(f"{name} must be at most {INT32_MAX} (the search counts in int32), received {result}.")
    return result


def int32_clamped(value):
    """Integers (a scalar or a vector) as int32, any past int32's largest held at it: for a bound such as
    `top_k`, where every value from the vocabulary's size up means the same."""
    static = tf.get_static_value(value)
    if static is not None:  # through float64, which holds every int32 exactly: no int64 overflow for 2**70
        return tf.constant(np.minimum(np.asarray(static, np.float64), INT32_MAX).astype(np.int32))
    value = tf.convert_to_tensor(value)
    if value.dtype.max > INT32_MAX:
        value = tf.minimum(value, tf.cast(INT32_MAX, value.dtype))
    return tf.cast(value, tf.int32)


def checked_ids(ids, name, vocab_size=None, empty_rows=False):
    """`ids` as int32 `(B, L)` token ids, checked: an integer dtype, rank 2, at least one column in a
    batch of known shape that has rows (unless `empty_rows`: targets may be empty), and every id in
    `[0, vocab_size)` when `vocab_size` is given (a
    ValueError eagerly, a graph assertion in a `tf.function`; Keras' embeddings would read a negative
    id as one counted from the end)."""
    if not tf.is_tensor(ids):
        try:
            ids = tf.convert_to_tensor(ids)
        except (TypeError, ValueError) as error:
            raise TypeError(f"{name} must be integer token ids of shape (batch, length): {error}") from None
    if not ids.dtype.is_integer:
        raise TypeError(f"{name} must hold integer token ids, received dtype {ids.dtype.name}.")
    shape = ids.shape
    if shape.rank is not None and shape.rank != 2:
        raise ValueError(f"{name} must have shape (batch, length), received shape {tuple(shape)}.")
    if shape.rank == 2 and shape[1] == 0 and shape[0] != 0 and not empty_rows:  # an empty batch is a batch (its result is empty)
        raise ValueError(f"{name} must have at least one position per sentence, received shape {tuple(shape)}.")
    # Checked in their own dtype, before the cast: an int64 id past int32 would wrap around to another id.
    limit = INT32_MAX + 1 if vocab_size is None else vocab_size
    message = f"{name} must be token ids in [0, {limit})"
    if ids.dtype.max < limit and vocab_size is None:  # int8, int16, uint8, uint16, int32: nothing to wrap
        return tf.cast(ids, tf.int32)
    if tf.executing_eagerly():
        values = ids.numpy()
        bad = values[(values < 0) | (values >= limit)]
        if bad.size:
            raise ValueError(f"{message}, received {int(bad[0])}.")
        return tf.cast(ids, tf.int32)
    checks = [tf.debugging.assert_non_negative(ids, message=message)]
    if limit <= ids.dtype.max:  # else every value of the dtype lies below it
        checks.append(tf.debugging.assert_less(ids, tf.cast(limit, ids.dtype), message=message))
    with tf.control_dependencies(checks):
        return tf.identity(tf.cast(ids, tf.int32))
