"""Beam search with finished hypotheses kept aside and length-normalized ranking."""

import tensorflow as tf

from zoo.data.vocabulary import BOS_ID, EOS_ID, PAD_ID
from zoo.decoding.constraints import decoding_limits, is_forbidden
from zoo.decoding.history import relaxed_shape, write_row
from zoo.decoding.length_penalty import check_length_normalization
from zoo.decoding.length_penalty import length_penalty as length_penalty_divisor
from zoo.decoding.length_penalty import ranking_score
from zoo.decoding.result import DecodingResult
from zoo.decoding.top_k import blocked_top_k

NEG_INF = float("-inf")


def _static_int(value, name):
    """`value` as a Python int when it is known while tracing, else an int32 scalar tensor."""
    static = tf.get_static_value(value)
    if static is None:
        return tf.cast(tf.reshape(value, []), tf.int32)
    if getattr(static, "size", 1) != 1:
        raise ValueError(f"{name} must be a scalar, received shape {getattr(static, 'shape', None)}.")
    return int(static.item() if hasattr(static, "item") else static)


def beam_search(
    model,
    source_ids,
    beam_width=5,
    num_hypotheses=1,
    length_penalty=0.6,
    coverage_penalty=0.0,
    max_length=None,
    length_normalization="gnmt",
):
    """The `num_hypotheses` best translations of each sentence found with a beam of `beam_width`.

    At step t every one of the K live hypotheses (all of t tokens) is extended by
    every token and the 2K best extensions by log-probability are kept (a like
    with like comparison: all have t + 1 tokens). End-token extensions among the
    K best leave the beam for the finished set, where they are frozen and ranked
    by their length-normalized score; the K best other extensions stay live. A
    sentence stops when no live hypothesis can still beat the worst of its kept
    finished ones (log-probabilities only decrease, so the best any continuation
    can score is `log_prob / max lp(t')` over the lengths t' still possible, and
    the coverage penalty is at most 0), or at its length limit, where the live
    hypotheses are finished as they are, without end token. With K = 1 and
    `length_penalty=0` this is greedy search token for token; with a beam as
    wide as the search space it is exhaustive search.

    The encoder memory is computed once per sentence and shared by its beams;
    only the decoder state is carried per beam `(B, K, ...)` and reordered with
    `tf.gather(..., batch_dims=1)`. Token, parent and attention histories are
    written once per step and the returned hypotheses are traced back at the
    end, so no history is copied per step. Works eagerly, in `tf.function` and
    under `jit_compile=True` (XLA then treats `beam_width`, `num_hypotheses` and
    `max_length` as compile-time constants).

    Args:
        model: an object with `encode` and `step` (docs/interfaces.md).
        source_ids: int `(B, S)` source token ids padded with PAD_ID.
        beam_width: K >= 1, a Python int or an int32 scalar tensor.
        num_hypotheses: N, hypotheses returned per sentence (clipped to K).
        length_penalty: alpha, a float or float32 scalar tensor; 0 ranks by the
            raw log-probability.
        coverage_penalty: beta >= 0 of the GNMT coverage penalty; 0 turns it off.
        max_length: None or a positive int / int32 scalar tensor: the most target
            tokens, end token included. None: `2 * source_length + 10` per sentence.
        length_normalization: "gnmt" (`((5 + t) / 6) ** alpha`) or "average"
            (`t ** alpha`), see `zoo.decoding.length_penalty`.

    Returns:
        A `DecodingResult`: `ids` int32 `(B, N, T)`, `lengths` `(B, N)`, `scores`
        `(B, N)` descending, `log_probs` `(B, N)`, `attention` `(B, N, T, S)`, where
        T is `max_length` (`2 * S + 10` by default).

    Example:

        result = beam_search(model, source_ids, beam_width=5, length_penalty=0.6)
        best = result.ids[:, 0, :]          # (B, T)

    References: Wu et al., 2016, "Google's Neural Machine Translation System"
    (length and coverage penalties); Koehn, 2004, "Pharaoh" (beam search).
    """
    check_length_normalization(length_normalization)
    beam = _static_int(beam_width, "beam_width")
    if isinstance(beam, int) and beam < 1:
        raise ValueError(f"beam_width must be >= 1, received {beam}.")
    hypotheses = _static_int(num_hypotheses, "num_hypotheses")
    if isinstance(hypotheses, int) and hypotheses < 1:
        raise ValueError(f"num_hypotheses must be >= 1, received {hypotheses}.")
    if isinstance(beam, int) and isinstance(hypotheses, int):
        hypotheses = min(hypotheses, beam)
    else:
        hypotheses = tf.minimum(hypotheses, beam)
    static_beta = tf.get_static_value(coverage_penalty)
    if static_beta is not None and float(static_beta) < 0:
        raise ValueError(
            f"coverage_penalty must be >= 0 (the stopping bound assumes the penalty is <= 0), "
            f"received {float(static_beta)}."
        )
    alpha = tf.cast(length_penalty, tf.float32)

    source_ids = tf.cast(source_ids, tf.int32)
    batch_size = tf.shape(source_ids)[0]
    source_length = tf.shape(source_ids)[1]
    limits, buffer_length = decoding_limits(source_ids, max_length)
    source_mask = tf.not_equal(source_ids, PAD_ID)[:, None, :]  # (B, 1, S)

    def score(log_probs, length, coverage):
        return ranking_score(
            log_probs, length, alpha, length_normalization, coverage, source_mask, coverage_penalty
        )

    memory, state = model.encode(source_ids)
    state = tf.nest.map_structure(lambda s: tf.repeat(tf.expand_dims(s, 1), beam, axis=1), state)

    def keep_going(t, tokens, state, live_log_probs, coverage, done, *unused):
        return tf.logical_and(t < buffer_length, tf.logical_not(tf.reduce_all(done)))

    def one_step(t, tokens, state, live_log_probs, coverage, done, history, finished):
        step_log_probs, state, attention = model.step(tokens, state, memory)
        step_log_probs = tf.cast(step_log_probs, tf.float32)  # (B, K, V)
        attention = tf.cast(attention, tf.float32)  # (B, K, S), rows indexed by the parent beam
        vocab_size = tf.shape(step_log_probs)[2]
        length = t + 1  # tokens in every extension

        # Only the K best extensions overall and the K best without end token matter below;
        # each has at most K - 1 better ones plus the end token and the two never-produced
        # PAD and BOS above it in its own beam, so each beam's K + 3 best tokens hold them
        # all: one pass over (B, K, V), no more.
        per_beam = tf.minimum(beam + 3, vocab_size)
        beam_log_probs, beam_tokens = blocked_top_k(step_log_probs, k=per_beam)  # (B, K, K + 3)
        beam_log_probs = tf.where(is_forbidden(beam_tokens), NEG_INF, beam_log_probs)

        # All extensions have the same length: rank them by raw log-probability.
        extended = tf.expand_dims(live_log_probs, 2) + beam_log_probs
        flat = tf.reshape(extended, [batch_size, -1])  # (B, K * (K + 3)), beam-major
        top_log_probs, top_index = tf.math.top_k(flat, k=2 * beam)  # (B, 2K), ties: lower index first
        top_parent = top_index // per_beam
        top_token = tf.gather(tf.reshape(beam_tokens, [batch_size, -1]), top_index, batch_dims=1)
        top_is_end = tf.equal(top_token, EOS_ID)
        covered = coverage + attention  # (B, K, S)

        # End-token extensions among the K best finish. (A mask, not a slice [:, :K]: XLA only
        # turns top_k back into its fast TopK kernel when nothing slices the result further.)
        among_best = tf.range(2 * beam) < beam
        end_log_probs = tf.where(top_is_end & among_best, top_log_probs, NEG_INF)  # (B, 2K)
        end_scores = score(end_log_probs, length, tf.gather(covered, top_parent, batch_dims=1))

        # The K best other extensions stay live (there are at most K end tokens in the 2K).
        live_log_probs, keep = tf.math.top_k(tf.where(top_is_end, NEG_INF, top_log_probs), k=beam)
        parent = tf.gather(top_parent, keep, batch_dims=1)  # (B, K)
        tokens = tf.gather(top_token, keep, batch_dims=1)
        state = tf.nest.map_structure(lambda s: tf.gather(s, parent, batch_dims=1), state)
        coverage = tf.gather(covered, parent, batch_dims=1)

        # At its length limit a sentence's live hypotheses finish as they are.
        at_limit = length >= limits  # (B,)
        cut_scores = score(live_log_probs, length, coverage)

        # Merge into the finished set; a sentence that is done no longer changes.
        fin_scores, fin_log_probs, fin_end, fin_token, fin_parent = finished
        frozen = tf.expand_dims(done, 1)
        candidate_scores = tf.concat(
            [
                fin_scores,
                tf.where(frozen, NEG_INF, end_scores),
                tf.where(frozen | ~tf.expand_dims(at_limit, 1), NEG_INF, cut_scores),
            ],
            axis=1,
        )  # (B, N + 3K); kept ones first so that they win ties
        fin_scores, pick = tf.math.top_k(candidate_scores, k=hypotheses)

        def pick_from(kept, from_end, from_cut):
            return tf.gather(tf.concat([kept, from_end, from_cut], axis=1), pick, batch_dims=1)

        finished = (
            fin_scores,
            pick_from(fin_log_probs, end_log_probs, live_log_probs),
            pick_from(fin_end, tf.fill(tf.shape(top_parent), t), tf.fill(tf.shape(parent), t)),
            pick_from(fin_token, tf.fill(tf.shape(top_parent), EOS_ID), tokens),
            pick_from(fin_parent, top_parent, parent),
        )

        token_history, parent_history, attention_history = history
        history = (
            write_row(token_history, t, tokens),
            write_row(parent_history, t, parent),
            write_row(attention_history, t, attention),
        )

        # Could any live hypothesis still beat the worst kept finished one?
        next_length = tf.minimum(length + 1, limits)
        best_divisor = tf.maximum(
            length_penalty_divisor(next_length, alpha, length_normalization),
            length_penalty_divisor(limits, alpha, length_normalization),
        )
        best_possible = tf.reduce_max(live_log_probs, axis=1) / best_divisor
        done = done | at_limit | (best_possible <= fin_scores[:, -1])
        return t + 1, tokens, state, live_log_probs, coverage, done, history, finished

    first_live = tf.where(tf.range(beam) == 0, 0.0, NEG_INF)  # one live hypothesis, not K copies
    no_hypotheses = tf.zeros([batch_size, hypotheses], tf.int32)
    loop_vars = (
        tf.constant(0),
        tf.fill([batch_size, beam], BOS_ID),
        state,
        tf.tile(tf.expand_dims(first_live, 0), [batch_size, 1]),
        tf.zeros([batch_size, beam, source_length], tf.float32),
        tf.zeros([batch_size], tf.bool),
        (
            tf.zeros([buffer_length, batch_size, beam], tf.int32),  # token of each live beam
            tf.zeros([buffer_length, batch_size, beam], tf.int32),  # its parent beam at t - 1
            tf.zeros([buffer_length, batch_size, beam, source_length], tf.float32),  # by parent
        ),
        (
            tf.fill([batch_size, hypotheses], NEG_INF),  # ranking score
            tf.fill([batch_size, hypotheses], NEG_INF),  # log-probability
            no_hypotheses,  # step of the last token
            no_hypotheses,  # last token (EOS_ID unless cut at the length limit)
            no_hypotheses,  # parent beam at the step before the last token
        ),
    )
    invariants = (
        tf.TensorShape([]),
        tf.TensorShape([None, None]),
        tf.nest.map_structure(lambda s: relaxed_shape(s, 2), state),
        tf.TensorShape([None, None]),
        tf.TensorShape([None, None, None]),
        tf.TensorShape([None]),
        (tf.TensorShape([None] * 3), tf.TensorShape([None] * 3), tf.TensorShape([None] * 4)),
        tuple(tf.TensorShape([None, None]) for _ in range(5)),
    )
    steps, _, _, _, _, _, history, finished = tf.while_loop(
        keep_going, one_step, loop_vars, shape_invariants=invariants
    )
    fin_scores, fin_log_probs, fin_end, fin_token, fin_parent = finished
    ids, attention = _trace_back(steps, history, fin_end, fin_token, fin_parent, buffer_length)
    return DecodingResult(
        ids=ids, lengths=fin_end + 1, scores=fin_scores, log_probs=fin_log_probs, attention=attention
    )


def _trace_back(steps, history, last_step, last_token, last_parent, buffer_length):
    """Follows parent pointers from each finished hypothesis' last token back to the first.

    Args:
        steps: int32 scalar, the number of steps the search ran.
        history: `(tokens, parents, attention)`, `(T, B, K)`, `(T, B, K)`, `(T, B, K, S)`.
        last_step, last_token, last_parent: int32 `(B, N)`.
        buffer_length: T.

    Returns:
        `(ids, attention)`: int32 `(B, N, T)` and float32 `(B, N, T, S)`.
    """
    token_history, parent_history, attention_history = history
    batch_size = tf.shape(last_step)[0]
    num_hypotheses = tf.shape(last_step)[1]
    source_length = tf.shape(attention_history)[3]

    def keep_going(t, *unused):
        return t >= 0

    def one_step(t, beam, ids, attention):
        at_last = tf.equal(t, last_step)
        inside = t <= last_step
        parent = tf.where(at_last, last_parent, tf.gather(parent_history[t], beam, batch_dims=1))
        token = tf.where(at_last, last_token, tf.gather(token_history[t], beam, batch_dims=1))
        token = tf.where(inside, token, PAD_ID)
        weights = tf.gather(attention_history[t], parent, batch_dims=1)  # (B, N, S)
        weights = tf.where(tf.expand_dims(inside, 2), weights, 0.0)
        beam = tf.where(inside, parent, beam)
        return t - 1, beam, write_row(ids, t, token), write_row(attention, t, weights)

    _, _, ids, attention = tf.while_loop(
        keep_going,
        one_step,
        (
            steps - 1,
            tf.zeros([batch_size, num_hypotheses], tf.int32),
            tf.zeros([buffer_length, batch_size, num_hypotheses], tf.int32),
            tf.zeros([buffer_length, batch_size, num_hypotheses, source_length], tf.float32),
        ),
        shape_invariants=(
            tf.TensorShape([]),
            tf.TensorShape([None, None]),
            tf.TensorShape([None] * 3),
            tf.TensorShape([None] * 4),
        ),
    )
    return tf.transpose(ids, [1, 2, 0]), tf.transpose(attention, [1, 2, 0, 3])
