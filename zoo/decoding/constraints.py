"""What a decoder may produce, and for how long: shared by greedy and beam search."""

import tensorflow as tf

from zoo.data.vocabulary import BOS_ID, PAD_ID
from zoo.decoding.arguments import static_int

# Default length limit of a sentence of `s` source tokens: 2 * s + 10 target tokens.
MAX_LENGTH_FACTOR = 2
MAX_LENGTH_OFFSET = 10


def source_lengths(source_ids):
    """int32 `(B,)`: real tokens per sentence of `source_ids` int32 `(B, S)` padded with PAD_ID."""
    return tf.reduce_sum(tf.cast(tf.not_equal(source_ids, PAD_ID), tf.int32), axis=1)


def decoding_limits(source_ids, max_length=None):
    """Per-sentence length limits and the length of the decoding buffers.

    Args:
        source_ids: int32 `(B, S)` padded with PAD_ID.
        max_length: None, or a positive int / int32 scalar tensor: the most target
            tokens (end token included) of any hypothesis, a cap on each sentence's own limit.

    Returns:
        `(limits, buffer_length)`: `limits` int32 `(B,)`, each sentence's own limit,
        `2 * source_length + 10` and at most `max_length` (so a sentence decodes the same
        alone or in a batch); `buffer_length` int32 scalar >= every limit, derived from
        shapes only (`min(2 * S + 10, max_length)`) so that XLA sees a compile-time constant.
    """
    limits = MAX_LENGTH_FACTOR * source_lengths(source_ids) + MAX_LENGTH_OFFSET
    buffer_length = MAX_LENGTH_FACTOR * tf.shape(source_ids)[1] + MAX_LENGTH_OFFSET
    if max_length is None:
        return limits, buffer_length
    cap = static_int(max_length, "max_length", minimum=1)
    return tf.minimum(limits, cap), tf.minimum(buffer_length, cap)


def forbid_special_tokens(log_probs, column_ids=None):
    """Sets the log-probability of PAD_ID and BOS_ID to -inf.

    Neither is a token a translation can contain: PAD_ID marks the end of the
    returned ids and BOS_ID is only ever the first decoder input. The other
    log-probabilities are left as the model gave them (not renormalized), so a
    hypothesis' reported log-probability is the model's own.

    Args:
        log_probs: float32 `(B, K, V)`, or `(B, K, M)` over a shortlist's columns.
        column_ids: int32 `(M,)`, the target id of each column; None: the columns are the ids.

    Returns:
        float32, the shape of `log_probs`.
    """
    forbidden = is_forbidden(tf.range(tf.shape(log_probs)[-1]) if column_ids is None else column_ids)
    return tf.where(forbidden, tf.constant(float("-inf"), log_probs.dtype), log_probs)


def is_forbidden(token_ids):
    """bool, same shape as `token_ids`: True for PAD_ID and BOS_ID, which decoders never produce."""
    return tf.logical_or(tf.equal(token_ids, PAD_ID), tf.equal(token_ids, BOS_ID))
