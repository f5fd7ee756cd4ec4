"""Beam search with finished hypotheses kept aside and length-normalized ranking."""

import dataclasses
from typing import Any, NamedTuple

import tensorflow as tf

from zoo.constants import BEAM_STOPPING, DEFAULT_BEAM_WIDTH, DEFAULT_LENGTH_PENALTY
from zoo.data.vocabulary import EOS_ID
from zoo.decoding.arguments import assert_penalties, check_penalties, static_int
from zoo.decoding.beams import Finished, History, gather_beams, merge_finished, trace_back
from zoo.decoding.extensions import best_extensions
from zoo.decoding.history import attention_buffer, check_alignments, no_alignments, write_row
from zoo.decoding.length_penalty import check_length_normalization, length_penalty, ranking_score
from zoo.decoding.loop import decode
from zoo.decoding.result import DecodingResult
from zoo.decoding.strategy import Advance, DecodingStrategy

NEG_INF = float("-inf")


class BeamState(NamedTuple):
    """Beam search's own loop state (K beams, N kept hypotheses, S source tokens).

    Fields:
        live_log_probs: float32 `(B, K)`: each live hypothesis' log-probability (-inf: none).
        coverage: float32 `(B, K, S)`: attention summed over each live hypothesis' tokens
            (an empty `(0,)` when the coverage penalty is a known 0: nothing reads it).
        history: a `History` of the live beams.
        finished: a `Finished` record of the N best finished hypotheses.
    """

    live_log_probs: tf.Tensor
    coverage: tf.Tensor
    history: History
    finished: Finished


@dataclasses.dataclass(frozen=True, eq=False)
class BeamSearch(DecodingStrategy, name="beam_search"):
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

    `stopping="approximate"` stops a sentence sooner: once its best live
    hypothesis, scored at its current length, is no better than the worst kept
    finished one. With a positive length penalty a longer continuation could
    still have overtaken them (the penalty rewards length), so the result may
    differ from the exact search's, never with a better score: the search is the
    same up to the step where it stops. With `length_penalty=0` both are the same.

    The encoder memory is computed once per sentence and shared by its beams;
    only the decoder state is carried per beam `(B, K, ...)` and reordered with
    `gather_beams`. The first step runs the model on one row per sentence (its K
    hypotheses are all the same there, see `first_view`), the later ones on K.
    Token, parent and attention histories are written once per step and the
    returned hypotheses are traced back at the end, so no history is copied per
    step. Under `jit_compile=True` XLA treats `beam_width`,
    `num_hypotheses` and `max_length` as compile-time constants.

    Args:
        beam_width: K >= 1, a Python int or an int32 scalar tensor.
        num_hypotheses: N, hypotheses returned per sentence (clipped to K).
        length_penalty: alpha, a finite float or float32 scalar tensor; 0 ranks by the
            raw log-probability.
        coverage_penalty: beta >= 0 of the GNMT coverage penalty; 0 turns it off.
        length_normalization: "gnmt" (`((5 + t) / 6) ** alpha`) or "average"
            (`t ** alpha`), see `zoo.decoding.length_penalty`.
        stopping: "exact" (the bound over every length still possible) or
            "approximate" (the current length only), see above.
        alignments: False keeps no attention history (the result's `attention` is
            zeros): for callers that never read it, a step then writes no `(B, K, S)` row.

    References: Wu et al., 2016, "Google's Neural Machine Translation System"
    (length and coverage penalties); Koehn, 2004, "Pharaoh" (beam search).
    """

    beam_width: Any
    num_hypotheses: Any = 1
    length_penalty: Any = DEFAULT_LENGTH_PENALTY
    coverage_penalty: Any = 0.0
    length_normalization: str = "gnmt"
    stopping: str = "exact"
    alignments: bool = True

    def __post_init__(self):
        check_length_normalization(self.length_normalization)
        check_alignments(self.alignments)
        if self.stopping not in BEAM_STOPPING:
            raise ValueError(f"stopping must be one of {list(BEAM_STOPPING)}, received {self.stopping!r}.")
        static_int(self.beam_width, "beam_width", minimum=1)
        static_int(self.num_hypotheses, "num_hypotheses", minimum=1)
        check_penalties(self.length_penalty, self.coverage_penalty)

    def width(self):
        """K, checked: a run-time tensor below 1 fails a graph assertion (`decode` calls it once per batch,
        as `start` does `_sizes(checked=True)`; the loop body takes the unchecked `_sizes()`)."""
        return self._sizes(checked=True)[0]

    def _sizes(self, checked=False):
        """(K, N): N is `num_hypotheses` clipped to K, each a Python int or an int32 scalar tensor;
        `checked` adds the `>= 1` graph assertions."""
        minimum = 1 if checked else None
        beam = static_int(self.beam_width, "beam_width", minimum=minimum)
        hypotheses = static_int(self.num_hypotheses, "num_hypotheses", minimum=minimum)
        if isinstance(beam, int) and isinstance(hypotheses, int):
            return beam, min(hypotheses, beam)
        return beam, tf.minimum(hypotheses, beam)

    def start(self, inputs):
        beam, hypotheses = self._sizes(checked=True)
        assert_penalties(self.length_penalty, self.coverage_penalty)  # once per batch, for run-time tensors
        batch_size, source_length, buffer_length = inputs.batch_size, inputs.source_length, inputs.buffer_length
        first_live = tf.where(tf.range(beam) == 0, 0.0, NEG_INF)  # one live hypothesis, not K copies
        nothing = tf.zeros([batch_size, hypotheses], tf.int32)
        return BeamState(
            live_log_probs=tf.tile(tf.expand_dims(first_live, 0), [batch_size, 1]),
            coverage=tf.zeros([batch_size, beam, source_length] if self.covers() else [0], tf.float32),
            history=History(
                tokens=tf.zeros([buffer_length, batch_size, beam], tf.int32),
                parents=tf.zeros([buffer_length, batch_size, beam], tf.int32),
                attention=attention_buffer(self.alignments, [buffer_length, batch_size, beam, source_length]),
            ),
            finished=Finished(
                scores=tf.fill([batch_size, hypotheses], NEG_INF),
                log_probs=tf.fill([batch_size, hypotheses], NEG_INF),
                last_step=nothing,
                last_token=nothing,
                last_parent=nothing,
            ),
        )

    def advance(self, inputs, loop, logits, attention):
        (beam, hypotheses), state, t = self._sizes(), loop.search, loop.step
        length = t + 1  # tokens in every extension
        one_row = loop.tokens.shape[1] == 1 and not (isinstance(beam, int) and beam == 1)  # see `first_view`
        top = best_extensions(logits, state.live_log_probs, beam, inputs.token_ids, one_row=one_row)
        covered = state.coverage + attention if self.covers() else None  # (B, K, S), rows by parent beam

        # End-token extensions among the K best finish. (A mask, not a slice [:, :K]: XLA only
        # turns top_k back into its fast TopK kernel when nothing slices the result further.)
        among_best = tf.range(2 * beam) < beam
        end_log_probs = tf.where(top.is_end & among_best, top.log_probs, NEG_INF)  # (B, 2K)
        end_scores = self.score(inputs, end_log_probs, length, _of_parents(covered, top.parents))

        # The K best other extensions stay live (there are at most K end tokens in the 2K).
        live_log_probs, keep = tf.math.top_k(tf.where(top.is_end, NEG_INF, top.log_probs), k=beam)
        parents = tf.gather(top.parents, keep, batch_dims=1)  # (B, K)
        tokens = tf.gather(top.tokens, keep, batch_dims=1)
        coverage = _of_parents(covered, parents)

        # At its length limit a sentence's live hypotheses finish as they are; a done one no longer changes.
        at_limit = length >= inputs.limits  # (B,)
        frozen = tf.expand_dims(loop.done, 1)
        ended = Finished(
            scores=tf.where(frozen, NEG_INF, end_scores),
            log_probs=end_log_probs,
            last_step=tf.fill(tf.shape(top.parents), t),
            last_token=tf.fill(tf.shape(top.parents), EOS_ID),
            last_parent=top.parents,
        )
        cut_scores = self.score(inputs, live_log_probs, length, coverage)
        cut = Finished(
            scores=tf.where(frozen | ~tf.expand_dims(at_limit, 1), NEG_INF, cut_scores),
            log_probs=live_log_probs,
            last_step=tf.fill(tf.shape(parents), t),
            last_token=tokens,
            last_parent=parents,
        )
        finished = merge_finished(state.finished, ended, cut, hypotheses=hypotheses)
        aligned = tf.repeat(attention, beam, axis=1) if one_row else attention  # rows by parent beam, K of them
        history = History(
            tokens=write_row(state.history.tokens, t, tokens),
            parents=write_row(state.history.parents, t, parents),
            attention=write_row(state.history.attention, t, aligned) if self.alignments else state.history.attention,
        )
        done = loop.done | at_limit | self.cannot_improve(live_log_probs, length, inputs.limits, finished)
        search = BeamState(live_log_probs, state.coverage if coverage is None else coverage, history, finished)
        return Advance(tokens=tokens, parents=parents, done=done, search=search)

    def covers(self):
        """Whether the search tracks coverage: unless the coverage penalty is known to be 0."""
        beta = tf.get_static_value(self.coverage_penalty)
        return beta is None or float(beta) != 0.0

    def score(self, inputs, log_probs, length, coverage):
        """The ranking score of hypotheses `(B, M)` of `length` tokens with `coverage` `(B, M, S)` or None."""
        if coverage is None:
            return ranking_score(log_probs, length, self.length_penalty, self.length_normalization)
        source_mask = tf.expand_dims(inputs.source_mask, 1)  # (B, 1, S)
        return ranking_score(
            log_probs, length, self.length_penalty, self.length_normalization, coverage, source_mask,
            self.coverage_penalty,
        )

    def cannot_improve(self, live_log_probs, length, limits, finished):
        """bool `(B,)`: no live hypothesis can still beat the worst kept finished one (`stopping`)."""
        best, worst = tf.reduce_max(live_log_probs, axis=1), finished.scores[:, -1]
        divisor = tf.maximum(  # the largest penalty of a length still possible (alpha < 0: it shrinks)
            length_penalty(tf.minimum(length + 1, limits), self.length_penalty, self.length_normalization),
            length_penalty(limits, self.length_penalty, self.length_normalization),
        )
        cannot = best / divisor <= worst
        if self.stopping == "approximate":  # or scored at the length they have now
            cannot |= best / length_penalty(length, self.length_penalty, self.length_normalization) <= worst
        return cannot

    def first_view(self, search):
        """The first step extends one hypothesis per sentence (the others start at -inf): its state alone."""
        coverage = search.coverage[:, :1] if self.covers() else search.coverage
        return search._replace(live_log_probs=search.live_log_probs[:, :1], coverage=coverage)

    def batch_axes(self, search):
        time_major = History(tokens=1, parents=1, attention=1 if self.alignments else None)
        finished = tf.nest.map_structure(lambda _: 0, search.finished)
        coverage = 0 if self.covers() else None
        return search._replace(live_log_probs=0, coverage=coverage, history=time_major, finished=finished)

    def finish(self, inputs, steps, search):
        ids, attention = trace_back(steps, search.history, search.finished)
        if not self.alignments:
            attention = no_alignments(ids, inputs.source_length)
        done = search.finished
        # A slot no hypothesis reached (a beam wider than the sentences there are) has length 0, not 1.
        lengths = tf.where(done.log_probs > NEG_INF, done.last_step + 1, 0)
        return DecodingResult.from_time_major(ids, lengths, done.scores, done.log_probs, attention)


def _of_parents(covered, parents):
    """The coverage `(B, M, S)` of extensions of the beams `parents` `(B, M)`, or None when `covered` is."""
    return None if covered is None else gather_beams(covered, parents)


def beam_search(
    model, source_ids, beam_width=DEFAULT_BEAM_WIDTH, num_hypotheses=1, length_penalty=DEFAULT_LENGTH_PENALTY,
    coverage_penalty=0.0, max_length=None, length_normalization="gnmt", shortlist=None, stopping="exact",
    alignments=True,
):
    """`decode(model, source_ids, BeamSearch(...), max_length, shortlist)`: see `BeamSearch` and `decode`.

    Args:
        model: an object with `encode` and `step` (docs/interfaces.md).
        source_ids: int `(B, S)` source token ids padded with PAD_ID.
        beam_width, num_hypotheses, length_penalty, coverage_penalty,
            length_normalization, stopping, alignments: see `BeamSearch`.
        max_length: None or a positive int / int32 scalar tensor: the most target
            tokens, end token included: a cap on each sentence's `2 * source_length + 10`.
        shortlist: None, or a `zoo.decoding.Shortlist` (see `decode`).

    Returns:
        A `DecodingResult` of N hypotheses per sentence (see `decode`).

    Example:

        result = beam_search(model, source_ids, beam_width=5, length_penalty=0.6)
        best = result.ids[:, 0, :]          # (B, T)
    """
    strategy = BeamSearch(beam_width, num_hypotheses, length_penalty, coverage_penalty, length_normalization,
                          stopping, alignments)
    return decode(model, source_ids, strategy, max_length, shortlist)
