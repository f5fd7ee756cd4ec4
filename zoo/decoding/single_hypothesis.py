"""Strategies that follow one hypothesis per sentence, one chosen token at a time (greedy, sampling)."""

from typing import Any, NamedTuple

import tensorflow as tf

from zoo.data.vocabulary import EOS_ID, PAD_ID
from zoo.decoding.constraints import forbid_special_tokens, is_forbidden
from zoo.decoding.log_softmax import log_normalizer, log_normalizer_at
from zoo.decoding.history import attention_buffer, no_alignments, write_row
from zoo.decoding.result import DecodingResult
from zoo.decoding.strategy import Advance, DecodingStrategy


class PathState(NamedTuple):
    """The loop state of a one-hypothesis search (S source tokens, T = buffer length).

    Fields:
        log_probs: float32 `(B,)`: the model's log-probability of the tokens so far.
        lengths: int32 `(B,)`: tokens so far, end token included.
        coverage: float32 `(B, S)`: attention summed over the tokens so far.
        ids: int32 `(T, B)`: the chosen tokens, time-major, PAD_ID after the last.
        attention: float32 `(T, B, S)`: each token's attention, zero rows after the last
            (an empty `(0,)` when the search keeps no alignments).
        choice: what `choose` needs from step to step (`()` when nothing).
    """

    log_probs: tf.Tensor
    lengths: tf.Tensor
    coverage: tf.Tensor
    ids: tf.Tensor
    attention: tf.Tensor
    choice: Any


class SingleHypothesisSearch(DecodingStrategy):
    """One live hypothesis per sentence (K = 1): subclasses only say how a token is chosen.

    PAD_ID and BOS_ID are never produced (see `forbid_special_tokens`). A sentence stops
    at its first end token or at its length limit; the batch stops when every sentence
    has stopped, and a sentence's result never depends on the others. The reported
    `log_probs` are the model's own (whatever `choose` did to pick a token), so they
    equal `sequence_log_prob` of the returned ids.

    `alignments` (a class attribute, or a field of a dataclass subclass) True keeps each
    token's attention; False: the result's `attention` is zeros and no step writes a
    history row. Subclasses implement `choose(log_probs, step, choice) -> token` and may override
    `start_choice(inputs)` (loop-invariant tensors `choose` needs, `()` by default; per-sentence
    ones along their leading dim unless `choice_axes` says otherwise) and
    `rank(log_probs, lengths, coverage, source_mask)` (the reported scores, by default
    the log-probabilities).
    """

    alignments = True
    chooses_from_logits = False  # True: `choose` gets logits (log-probabilities up to a per-row constant)
    chooses_argmax = False  # True: `choose` is an argmax, so `advance` may call it on the unmasked logits

    def width(self):
        return 1

    def start_choice(self, inputs):
        return ()

    def choose(self, log_probs, step, choice):
        """int32 `(B,)`: the next token of each sentence from `log_probs` float32 `(B, V)`
        (-inf at PAD_ID and BOS_ID); `step` int32 scalar: tokens decoded so far.

        With a shortlist the columns of `log_probs` are its M ids in ascending order
        (`SearchInputs.output_ids`) and `choose` returns columns; the search maps them to ids.
        """
        raise NotImplementedError(f"{type(self).__name__} must implement choose(log_probs, step, choice).")

    def rank(self, log_probs, lengths, coverage, source_mask):
        """float32 `(B,)`: the reported score of finished hypotheses."""
        return log_probs

    def start(self, inputs):
        batch_size, source_length = inputs.batch_size, inputs.source_length
        return PathState(
            log_probs=tf.zeros([batch_size], tf.float32),
            lengths=tf.zeros([batch_size], tf.int32),
            coverage=tf.zeros([batch_size, source_length], tf.float32),
            ids=tf.zeros([inputs.buffer_length, batch_size], tf.int32),
            attention=attention_buffer(self.alignments, [inputs.buffer_length, batch_size, source_length]),
            choice=self.start_choice(inputs),
        )

    def advance(self, inputs, loop, logits, attention):
        state, t = loop.search, loop.step
        logits = logits[:, 0]  # (B, V) or (B, M)
        if self.chooses_argmax:
            column, normalizer = _best_allowed(lambda x: self.choose(x, t, state.choice), logits, inputs)
        else:
            normalizer = log_normalizer(logits)  # (B, 1): log p = logits - normalizer
            allowed = forbid_special_tokens(logits, inputs.output_ids)
            # Only what `choose` reads is normalized: an argmax needs no log-softmax.
            column = self.choose(allowed if self.chooses_from_logits else allowed - normalizer, t, state.choice)  # (B,)
        token_log_prob = tf.gather(logits, column, batch_dims=1) - normalizer[:, 0]
        attention = attention[:, 0]  # (B, S)
        active = tf.logical_not(loop.done)
        token = tf.where(active, inputs.token_ids(column), PAD_ID)
        attention = tf.where(active[:, None], attention, 0.0)
        search = state._replace(
            log_probs=state.log_probs + tf.where(active, token_log_prob, 0.0),
            lengths=state.lengths + tf.cast(active, tf.int32),
            coverage=state.coverage + attention,
            ids=write_row(state.ids, t, token),
            attention=write_row(state.attention, t, attention) if self.alignments else state.attention,
        )
        done = loop.done | tf.equal(token, EOS_ID) | (t + 1 >= inputs.limits)
        return Advance(tokens=token[:, None], parents=None, done=done, search=search)

    def batch_axes(self, search):
        return search._replace(
            log_probs=0, lengths=0, coverage=0, ids=1, attention=1 if self.alignments else None,
            choice=self.choice_axes(search.choice),
        )

    def choice_axes(self, choice):
        """The batch axis of each tensor of `start_choice`'s structure (see `batch_axes`): 0 by default."""
        return tf.nest.map_structure(lambda _: 0, choice)

    def finish(self, inputs, steps, search):
        scores = self.rank(search.log_probs, search.lengths, search.coverage, inputs.source_mask)
        ids = search.ids[:, :, None]  # (T, B, 1)
        attention = search.attention[:, :, None] if self.alignments else no_alignments(ids, inputs.source_length)
        return DecodingResult.from_time_major(
            ids=ids,
            lengths=search.lengths[:, None],
            scores=scores[:, None],
            log_probs=search.log_probs[:, None],
            attention=attention,
        )


def _best_allowed(argmax, logits, inputs):
    """`(column, normalizer)`: each row's argmax over the tokens it may produce, int32 `(B,)`, and its
    `logsumexp` float32 `(B, 1)`, read at the argmax of the whole row (`log_normalizer_at`).

    `argmax(logits (B, V)) -> (B,)` is the strategy's `choose`: the lowest column of each row's
    maximum. PAD and BOS are masked, and `argmax` taken again, only when a row's maximum lies on
    one of them, which a trained model all but never gives: otherwise that row's argmax is already
    the lowest column of the allowed maximum (masking only lowers forbidden logits), and the
    `(B, V)` mask costs a pass over the logits at every step.
    """
    best = argmax(logits)
    return tf.cond(
        tf.reduce_any(is_forbidden(inputs.token_ids(best))),
        lambda: argmax(forbid_special_tokens(logits, inputs.output_ids)),
        lambda: best,
    ), log_normalizer_at(logits, best)
