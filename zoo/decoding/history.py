"""Loop plumbing shared by the decoders: fixed-size histories and loose shape invariants."""

import tensorflow as tf


def relaxed_shape(tensor, num_dynamic):
    """`tensor`'s static shape with its first `num_dynamic` dimensions unknown.

    Used as a `tf.while_loop` shape invariant: the batch and beam dimensions may be
    run-time values (and a model may lose their static size), the feature
    dimensions stay known so that layers inside `step` can build.
    """
    shape = tf.TensorShape(tensor.shape)
    return tf.TensorShape([None] * num_dynamic).concatenate(shape[num_dynamic:])


def write_row(buffer, index, row):
    """`buffer` with `buffer[index] = row`: a fixed-size history that XLA can compile."""
    return tf.tensor_scatter_nd_update(buffer, tf.reshape(index, [1, 1]), tf.expand_dims(row, 0))


def check_alignments(alignments):
    """A strategy's `alignments` flag must be a Python bool (it decides what the loop carries)."""
    if not isinstance(alignments, bool):
        raise ValueError(f"alignments must be True or False, received {alignments!r}.")


def attention_buffer(alignments, shape):
    """The zero attention history of `shape` (T first), or, without alignments, an empty stand-in
    that the loop carries unchanged (no step writes it)."""
    return tf.zeros(shape if alignments else [0], tf.float32)


def no_alignments(ids, source_length):
    """float32 zeros `(T, B, N, S)` beside time-major ids `(T, B, N)`: the attention of a search
    that kept none."""
    return tf.zeros(tf.concat([tf.shape(ids), [source_length]], 0), tf.float32)
