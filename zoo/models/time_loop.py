"""A scan over time whose per-step output may differ in shape from the carried state."""

import keras
from keras import ops


def scan(fn, init, xs):
    """Runs `carry, y = fn(carry, x)` over the leading axis of `xs`; returns `(carry, ys)`.

    `y` is one tensor. Keras' own `ops.scan` on the TensorFlow backend requires `y`
    to have the carry's structure, so TensorFlow gets its own while loop here.
    """
    if keras.backend.backend() != "tensorflow":
        return ops.scan(fn, init, xs)
    import tensorflow as tf

    xs = tf.convert_to_tensor(xs)
    length = tf.shape(xs)[0]
    inputs = tf.TensorArray(xs.dtype, size=length, element_shape=xs.shape[1:]).unstack(xs)
    # The first step runs before the loop: its output gives the dtype and shape of all.
    carry, first = fn(init, inputs.read(0))
    outputs = tf.TensorArray(first.dtype, size=length, element_shape=first.shape).write(0, first)

    def body(i, carry, outputs):
        carry, y = fn(carry, inputs.read(i))
        return i + 1, carry, outputs.write(i, y)

    _, carry, outputs = tf.while_loop(
        lambda i, *_: i < length, body, (tf.constant(1), carry, outputs), maximum_iterations=length - 1
    )
    ys = outputs.stack()
    ys.set_shape(tf.TensorShape([xs.shape[0]]).concatenate(first.shape))
    return carry, ys
