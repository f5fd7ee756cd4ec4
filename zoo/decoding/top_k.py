"""Exact top-k over a large last axis that reads the input once."""

import tensorflow as tf


BLOCK_SIZE = 64  # values per block: rows whose length it divides are read without a padded copy


def blocked_top_k(values, k, block_size=BLOCK_SIZE):
    """`tf.math.top_k(values, k)` for a long last axis, computed through block maxima.

    TensorFlow's CPU TopK kernel is slow on rows of thousands of values (it dominates a
    beam search step over an 8k vocabulary). The k largest values of a row lie in the k
    blocks with the largest maxima: a value outside them is beaten by the maxima of k
    other blocks. So: one reduction to block maxima, a top-k over the (few) maxima, and a
    top-k over the k chosen blocks. The chosen blocks are read in index order, so ties
    go to the lower index, exactly as `tf.math.top_k`.

    Args:
        values: float `(..., V)`.
        k: int, `k <= V`.
        block_size: values per block.

    Returns:
        `(top_values, top_indices)`, each `(..., k)`, indices int32 into the last axis.
    """
    values = tf.convert_to_tensor(values)
    length = tf.shape(values)[-1]
    if values.shape[-1] is not None and values.shape[-1] <= 4 * block_size:
        return tf.math.top_k(values, k=k)
    outer = tf.shape(values)[:-1]
    rows = tf.reshape(values, [-1, length])  # (R, V)
    num_blocks = (length + block_size - 1) // block_size
    if values.shape[-1] is None or values.shape[-1] % block_size:
        padding = num_blocks * block_size - length
        lowest = tf.fill([tf.shape(rows)[0], padding], tf.constant(values.dtype.min, values.dtype))
        if values.shape[-1] is None:  # a copy of every row only when the blocks do not fill it (a shortlist's M)
            rows = tf.cond(padding > 0, lambda: tf.concat([rows, lowest], 1), lambda: rows)
        else:
            rows = tf.concat([rows, lowest], 1)
    blocks = tf.reshape(rows, [-1, num_blocks, block_size])  # (R, NB, block)
    block_count = tf.minimum(k, num_blocks)
    _, chosen = tf.math.top_k(tf.reduce_max(blocks, axis=2), k=block_count)  # (R, k)
    chosen = tf.sort(chosen, axis=1)  # index order, for the ties
    candidates = tf.reshape(tf.gather(blocks, chosen, batch_dims=1), [-1, block_count * block_size])
    top_values, position = tf.math.top_k(candidates, k=k)  # (R, k)
    top_indices = tf.gather(chosen, position // block_size, batch_dims=1) * block_size + position % block_size
    shape = tf.concat([outer, [k]], 0)
    return tf.reshape(top_values, shape), tf.reshape(top_indices, shape)
