"""Greedy search: the most probable next token at every step."""

import tensorflow as tf

from zoo.data.vocabulary import BOS_ID, EOS_ID, PAD_ID
from zoo.decoding.constraints import decoding_limits, forbid_special_tokens
from zoo.decoding.history import relaxed_shape, write_row
from zoo.decoding.length_penalty import check_length_normalization, ranking_score
from zoo.decoding.result import DecodingResult


def greedy_search(
    model,
    source_ids,
    max_length=None,
    length_penalty=0.0,
    coverage_penalty=0.0,
    length_normalization="gnmt",
):
    """Decodes each sentence by taking the most probable token until the end token.

    Works eagerly, inside `tf.function` and under `tf.function(jit_compile=True)`.
    PAD_ID and BOS_ID are never produced (see `forbid_special_tokens`). A sentence
    stops at its first end token or at its length limit; the batch stops when
    every sentence has stopped, and a sentence's result never depends on the others.

    Args:
        model: an object with `encode(source_ids) -> (memory, state)` and
            `step(token_ids (B, K), state (B, K, ...), memory) -> (log_probs (B, K, V),
            state, attention (B, K, S))` (docs/interfaces.md).
        source_ids: int `(B, S)` source token ids padded with PAD_ID.
        max_length: None or a positive int / int32 scalar tensor: the most target
            tokens, end token included. None: `2 * source_length + 10` per sentence.
        length_penalty, coverage_penalty, length_normalization: only change the
            reported `scores` (see `zoo.decoding.length_penalty.ranking_score`),
            so that greedy and beam search scores compare.

    Returns:
        A `DecodingResult` with N = 1: `ids` int32 `(B, 1, T)`, `lengths` `(B, 1)`,
        `scores` `(B, 1)`, `log_probs` `(B, 1)`, `attention` `(B, 1, T, S)`, where T is
        `max_length` (`2 * S + 10` by default).

    Example:

        result = greedy_search(model, source_ids)
        best = result.ids[:, 0, :]          # (B, T)
    """
    check_length_normalization(length_normalization)
    source_ids = tf.cast(source_ids, tf.int32)
    batch_size = tf.shape(source_ids)[0]
    source_length = tf.shape(source_ids)[1]
    limits, buffer_length = decoding_limits(source_ids, max_length)
    source_mask = tf.not_equal(source_ids, PAD_ID)

    memory, state = model.encode(source_ids)
    state = tf.nest.map_structure(lambda s: tf.expand_dims(s, 1), state)  # (B, 1, ...)

    def keep_going(t, tokens, state, finished, *unused):
        return tf.logical_and(t < buffer_length, tf.logical_not(tf.reduce_all(finished)))

    def one_step(t, tokens, state, finished, log_probs, lengths, coverage, ids, attention):
        step_log_probs, state, step_attention = model.step(tokens, state, memory)
        step_log_probs = forbid_special_tokens(tf.cast(step_log_probs, tf.float32))[:, 0]  # (B, V)
        step_attention = tf.cast(step_attention, tf.float32)[:, 0]  # (B, S)
        active = tf.logical_not(finished)
        token = tf.argmax(step_log_probs, axis=-1, output_type=tf.int32)  # (B,)
        token_log_prob = tf.gather(step_log_probs, token, batch_dims=1)
        token = tf.where(active, token, PAD_ID)
        step_attention = tf.where(active[:, None], step_attention, 0.0)
        log_probs += tf.where(active, token_log_prob, 0.0)
        lengths += tf.cast(active, tf.int32)
        coverage += step_attention
        ids = write_row(ids, t, token)
        attention = write_row(attention, t, step_attention)
        finished = finished | tf.equal(token, EOS_ID) | (t + 1 >= limits)
        return t + 1, token[:, None], state, finished, log_probs, lengths, coverage, ids, attention

    loop_vars = (
        tf.constant(0),
        tf.fill([batch_size, 1], BOS_ID),
        state,
        tf.zeros([batch_size], tf.bool),
        tf.zeros([batch_size], tf.float32),
        tf.zeros([batch_size], tf.int32),
        tf.zeros([batch_size, source_length], tf.float32),
        tf.zeros([buffer_length, batch_size], tf.int32),  # time-major history
        tf.zeros([buffer_length, batch_size, source_length], tf.float32),
    )
    invariants = (
        tf.TensorShape([]),
        tf.TensorShape([None, 1]),
        tf.nest.map_structure(lambda s: relaxed_shape(s, 1), state),
        tf.TensorShape([None]),
        tf.TensorShape([None]),
        tf.TensorShape([None]),
        tf.TensorShape([None, None]),
        tf.TensorShape([None, None]),
        tf.TensorShape([None, None, None]),
    )
    _, _, _, _, log_probs, lengths, coverage, ids, attention = tf.while_loop(
        keep_going, one_step, loop_vars, shape_invariants=invariants
    )
    scores = ranking_score(
        log_probs, lengths, length_penalty, length_normalization, coverage, source_mask, coverage_penalty
    )
    return DecodingResult(
        ids=tf.transpose(ids)[:, None, :],
        lengths=lengths[:, None],
        scores=scores[:, None],
        log_probs=log_probs[:, None],
        attention=tf.transpose(attention, [1, 0, 2])[:, None],
    )
