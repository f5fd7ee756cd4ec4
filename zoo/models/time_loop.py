"""A scan over time whose per-step outputs may differ in structure and shape from the carried state."""

import keras
from keras import ops


def scan(fn, init, xs):
    """Runs `carry, y = fn(carry, x)` over the leading axis of `xs`; returns `(carry, ys)`.

    Args:
        fn: `(carry, x) -> (carry, y)`; `carry` and `y` are nested structures (tuples,
            lists, dicts) of tensors, `y` of any structure of its own.
        init: the initial carry.
        xs: a tensor `(T, ...)`, or a nested structure of such tensors, read one step
            `(...)` at a time.

    Returns:
        `(carry, ys)`: the last carry, and `y`'s structure with every tensor stacked
        over time, `(T, ...)`.

    Keras' own `ops.scan` on the TensorFlow backend requires `y` to have the carry's
    structure, so TensorFlow gets its own while loop here.
    """
    if keras.backend.backend() != "tensorflow":
        return ops.scan(fn, init, xs)
    import tensorflow as tf

    leaves = [tf.convert_to_tensor(x) for x in tf.nest.flatten(xs)]
    steps = leaves[0].shape[0]
    length = tf.shape(leaves[0])[0]
    inputs = [tf.TensorArray(x.dtype, size=length, element_shape=x.shape[1:]).unstack(x) for x in leaves]

    def read(i):
        return tf.nest.pack_sequence_as(xs, [array.read(i) for array in inputs])

    # The first step runs before the loop: its outputs give the dtypes and shapes of all.
    carry, first = fn(init, read(0))
    first_leaves = tf.nest.flatten(first)
    outputs = [
        tf.TensorArray(y.dtype, size=length, element_shape=y.shape).write(0, y) for y in first_leaves
    ]

    def body(i, carry, outputs):
        carry, y = fn(carry, read(i))
        return i + 1, carry, [array.write(i, leaf) for array, leaf in zip(outputs, tf.nest.flatten(y))]

    _, carry, outputs = tf.while_loop(
        lambda i, *_: i < length, body, (tf.constant(1), carry, outputs), maximum_iterations=length - 1
    )
    ys = []
    for array, leaf in zip(outputs, first_leaves):
        stacked = array.stack()
        stacked.set_shape(tf.TensorShape([steps]).concatenate(leaf.shape))
        ys.append(stacked)
    return carry, tf.nest.pack_sequence_as(first, ys)
