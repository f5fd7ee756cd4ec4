"""Static-shape batches: each length bucket padded to one length, so XLA compiles once per bucket.

`make_dataset(..., static_shapes=True)`: every batch of a bucket has the same number of
rows and is padded to the bucket's length (the bucket boundaries are the padded lengths,
`static_bucket_lengths`), and each bucket's partial last batch is dropped (the reshuffle
drops other pairs at the next epoch). An epoch then holds one shape per bucket.
"""

import tensorflow as tf

from zoo.data import vocabulary


def static_bucket_lengths(max_source_length, max_target_length, bucket_boundaries):
    """The padded lengths of the static-shape buckets: the boundaries, up to the longest row.

    A pair of length `max(S, T + 1)` goes to the first bucket at least as long; the last
    bucket is the longest possible row, `max(max_source_length, max_target_length + 1)`.
    """
    longest = max(max_source_length, max_target_length + 1)  # + 1: <s> or </s>
    return sorted({min(int(b), longest) for b in bucket_boundaries} | {longest})


def static_batches(dataset, lengths, batch_sizes, max_source_length, max_target_length):
    """Unbatched rows -> full batches of one bucket, padded to the bucket's length.

    Bucket `k` holds `batch_sizes[k]` rows; its source is padded to
    `min(lengths[k], max_source_length)` tokens and its targets to
    `min(lengths[k], max_target_length + 1)`. Each bucket's partial batch is dropped.
    """
    lengths = tf.constant(lengths, tf.int64)
    source_lengths = tf.minimum(lengths, max_source_length)  # (buckets,)
    target_lengths = tf.minimum(lengths, max_target_length + 1)
    sizes = tf.constant(batch_sizes, tf.int64)
    # One size for all buckets (a sentence count) keeps the batch dimension static.
    uniform = batch_sizes[0] if len(set(batch_sizes)) == 1 else None

    def bucket(inputs, target_out_ids):
        length = tf.cast(tf.maximum(tf.size(inputs[0]), tf.size(target_out_ids)), tf.int64)
        return tf.reduce_sum(tf.cast(lengths < length, tf.int64))  # the first bucket >= length

    def batch(key, rows):
        source, target = tf.gather(source_lengths, key), tf.gather(target_lengths, key)
        return rows.padded_batch(
            uniform or tf.gather(sizes, key), padded_shapes=(([source], [target]), [target]),
            padding_values=((vocabulary.PAD_ID, vocabulary.PAD_ID), vocabulary.PAD_ID), drop_remainder=True,
        )

    if uniform:
        return dataset.group_by_window(bucket, batch, window_size=uniform)
    return dataset.group_by_window(bucket, batch, window_size_func=lambda key: tf.gather(sizes, key))
