"""Teacher-forced log-probability of given translations: what the `score` signature returns."""

import tensorflow as tf

from zoo.data.vocabulary import BOS_ID, EOS_ID, PAD_ID
from zoo.decoding.arguments import checked_ids
from zoo.decoding.shortlist import check_shortlist


def sequence_log_prob(model, source_ids, target_ids, append_end=True, shortlist=None):
    """`log p(y | x)`: the sum of the model's token log-probabilities, end token included.

    The target is read up to its first end token or its first padding, whichever
    comes first (so the `ids` of a `DecodingResult` can be passed as they are), and the
    end token is appended when `append_end` (a hypothesis cut at `max_length` has
    no end token: pass `append_end=False` to score it as beam search did). The
    model runs once in teacher forcing (`model((source_ids, target_in_ids))`), so
    the result equals the `log_probs` beam search reports for the same target.

    Args:
        model: a zoo model: `model((source_ids, target_in_ids), training=False)`
            returns logits `(B, T, V)`.
        source_ids: int `(B, S)` padded with PAD_ID.
        target_ids: int `(B, T)` padded with PAD_ID, without BOS (T may be 0: empty translations).
        append_end: add the end token to targets that do not contain one.
        shortlist: None, or a `zoo.decoding.Shortlist`: each sentence's log-softmax runs
            over its own shortlisted ids, as in a search with it (a token outside them: -inf).

    Returns:
        float32 `(B,)`.
    """
    check_shortlist(shortlist, model)
    source_ids = checked_ids(source_ids, "source_ids", getattr(model, "source_vocab_size", None))
    target_ids = checked_ids(target_ids, "target_ids", getattr(model, "target_vocab_size", None), empty_rows=True)
    target_ids = _same_batch(source_ids, target_ids)
    target = tf.pad(target_ids, [[0, 0], [0, 1]])  # room for the end token, (B, T + 1)
    position = tf.range(tf.shape(target)[1])[None, :]

    is_end = tf.equal(target, EOS_ID)
    has_end = tf.reduce_any(is_end, axis=1)
    first_end = tf.argmax(tf.cast(is_end, tf.int32), axis=1, output_type=tf.int32)
    # Up to the first padding (the pad column added above is always one): later tokens are not read.
    num_tokens = tf.argmax(tf.cast(tf.equal(target, PAD_ID), tf.int32), axis=1, output_type=tf.int32)
    has_end = has_end & (first_end < num_tokens)  # an end token after the padding is not read either
    if append_end:
        target = tf.where(
            tf.logical_and(~has_end[:, None], tf.equal(position, num_tokens[:, None])), EOS_ID, target
        )
        lengths = tf.where(has_end, first_end + 1, num_tokens + 1)
    else:
        lengths = tf.where(has_end, first_end + 1, num_tokens)
    inside = position < lengths[:, None]
    target_out = tf.where(inside, target, PAD_ID)
    target_in = tf.concat([tf.fill([tf.shape(target)[0], 1], BOS_ID), target_out[:, :-1]], axis=1)

    logits = tf.cast(model((source_ids, target_in), training=False), tf.float32)
    if shortlist is not None:
        logits = tf.where(shortlist.sentence_mask(source_ids)[:, None, :], logits, float("-inf"))
    log_probs = tf.nn.log_softmax(logits, axis=-1)  # (B, T + 1, V)
    token_log_probs = tf.gather(log_probs, target_out, batch_dims=2)  # (B, T + 1)
    return tf.reduce_sum(tf.where(inside, token_log_probs, 0.0), axis=1)


def _same_batch(source_ids, target_ids):
    """`target_ids`, after checking that it has as many rows as `source_ids` (a ValueError naming both
    shapes, or a graph assertion when they are known only at run time)."""
    sources, targets = source_ids.shape[0], target_ids.shape[0]
    if sources is not None and targets is not None:
        if sources != targets:
            raise ValueError(f"source_ids and target_ids must have as many sentences, received shapes "
                             f"{tuple(source_ids.shape)} and {tuple(target_ids.shape)}.")
        return target_ids
    check = tf.debugging.assert_equal(tf.shape(source_ids)[0], tf.shape(target_ids)[0],
                                      message="source_ids and target_ids must have as many sentences")
    with tf.control_dependencies([check]):
        return tf.identity(target_ids)
