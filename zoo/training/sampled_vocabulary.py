"""Training over a sampled target vocabulary: the softmax of each batch over some of the ids only.

Jean et al. (2015, "On Using Very Large Target Vocabulary for Neural Machine Translation",
section 3) train the output layer of a batch over a subset V' of the target vocabulary that
holds the batch's own target words, which makes the output projection and its softmax
|V'|/|V| as dear. Here V' is the batch's target ids (pad, `</s>` and every reference token),
filled up to `size` ids with ids drawn uniformly from the rest of the vocabulary, so that
every id meets the softmax's denominator now and then. Decoding, evaluation and the export
always use the whole vocabulary. With `sampled_vocabulary=0` (the default) a batch's softmax
runs over every id.

The batches get a third model input, V' sorted `(B, M)` (each row the same, so that a strategy
may split the batch over replicas), and their target ids become positions in it: `PAD_ID`
stays 0 (the smallest id is always in V'), so the loss' mask and the accuracy work unchanged.
"""

import tensorflow as tf

from zoo.constants import PAD_ID


def sample_vocabulary(target_out_ids, vocab_size, size, seed):
    """`(ids, positions)`: V' sorted int32 `(M,)` and `target_out_ids (B, T)` as positions in it.

    M is `size`, or the number of distinct ids of the batch (and pad) where that is more.
    `seed`: integer `(2,)`, the stateless seed of the ids drawn to fill V'.
    """
    target_out_ids = tf.cast(target_out_ids, tf.int32)
    flat = tf.concat([tf.reshape(target_out_ids, [-1]), [PAD_ID]], axis=0)
    present = tf.scatter_nd(flat[:, None], tf.ones_like(flat), [vocab_size]) > 0  # (V,)
    order = tf.argsort(tf.random.stateless_uniform([vocab_size], seed))  # a uniform permutation of the ids
    absent = tf.boolean_mask(order, tf.logical_not(tf.gather(present, order)))
    fill = absent[: tf.maximum(size - tf.reduce_sum(tf.cast(present, tf.int32)), 0)]
    chosen = tf.tensor_scatter_nd_update(present, fill[:, None], tf.ones_like(fill, tf.bool))  # (V,)
    ids = tf.cast(tf.where(chosen)[:, 0], tf.int32)  # in ascending order
    position = tf.scatter_nd(ids[:, None], tf.range(tf.size(ids)), [vocab_size])  # id -> its column in V'
    return ids, tf.gather(position, target_out_ids)


def with_sampled_vocabulary(dataset, vocab_size, size, seed=0):
    """`dataset` of `((source, target_in), target_out)` batches as `((source, target_in, ids), positions)`
    (see the module); unchanged when `size` is 0."""
    if not size:
        return dataset
    if not 0 < size < vocab_size:
        raise ValueError(f"sampled_vocabulary={size}: expected 0 (every id) or fewer than the {vocab_size} target ids")

    def sample(index, batch):
        (source, target_in), target_out = batch
        ids, positions = sample_vocabulary(target_out, vocab_size, size, tf.stack([tf.cast(seed, tf.int64), index]))
        rows = tf.tile(ids[None], [tf.shape(target_out)[0], 1])
        return (source, target_in, rows), positions

    return dataset.enumerate().map(sample, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)
