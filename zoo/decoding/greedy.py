"""Greedy search: the most probable next token at every step."""

import dataclasses
from typing import Any

import tensorflow as tf

from zoo.decoding.arguments import assert_penalties, check_penalties
from zoo.decoding.history import check_alignments
from zoo.decoding.length_penalty import check_length_normalization, ranking_score
from zoo.decoding.loop import decode
from zoo.decoding.single_hypothesis import SingleHypothesisSearch


@dataclasses.dataclass(frozen=True, eq=False)
class Greedy(SingleHypothesisSearch, name="greedy"):
    """Decodes each sentence by taking the most probable token until the end token.

    Ties go to the lower token id. The penalties only change the reported `scores`
    (see `zoo.decoding.length_penalty.ranking_score`), so that greedy and beam search
    scores compare; the tokens are the same whatever they are.

    Args:
        length_penalty: alpha, a finite float or float32 scalar tensor.
        coverage_penalty: beta >= 0 of the GNMT coverage penalty.
        length_normalization: "gnmt" or "average".
        alignments: False keeps no attention history (the result's `attention` is zeros).
    """

    length_penalty: Any = 0.0
    coverage_penalty: Any = 0.0
    length_normalization: str = "gnmt"
    alignments: bool = True

    def __post_init__(self):
        check_alignments(self.alignments)
        check_length_normalization(self.length_normalization)
        check_penalties(self.length_penalty, self.coverage_penalty)

    chooses_from_logits = True  # the argmax of the logits is that of the log-probabilities
    chooses_argmax = True  # `advance` calls it on the unmasked logits, masking only where needed (`_best_allowed`)

    def start_choice(self, inputs):
        assert_penalties(self.length_penalty, self.coverage_penalty)  # once per batch, for run-time tensors
        return ()

    def choose(self, log_probs, step, choice):
        return tf.argmax(log_probs, axis=-1, output_type=tf.int32)

    def rank(self, log_probs, lengths, coverage, source_mask):
        return ranking_score(
            log_probs, lengths, self.length_penalty, self.length_normalization, coverage, source_mask,
            self.coverage_penalty,
        )


def greedy_search(
    model,
    source_ids,
    max_length=None,
    length_penalty=0.0,
    coverage_penalty=0.0,
    length_normalization="gnmt",
    shortlist=None,
    alignments=True,
):
    """`decode(model, source_ids, Greedy(...), max_length, shortlist)`: see `Greedy` and `decode`.

    Args:
        model: an object with `encode(source_ids) -> (memory, state)` and
            `step(token_ids (B, K), state (B, K, ...), memory) -> (log_probs (B, K, V),
            state, attention (B, K, S))` (docs/interfaces.md).
        source_ids: int `(B, S)` source token ids padded with PAD_ID.
        max_length: None or a positive int / int32 scalar tensor: the most target
            tokens, end token included: a cap on each sentence's `2 * source_length + 10`.
        length_penalty, coverage_penalty, length_normalization: only change the
            reported `scores`, see `Greedy`.
        shortlist: None, or a `zoo.decoding.Shortlist` (see `decode`).
        alignments: False: the result's `attention` is zeros (see `Greedy`).

    Returns:
        A `DecodingResult` with N = 1: `ids` int32 `(B, 1, T)`, `lengths` `(B, 1)`,
        `scores` `(B, 1)`, `log_probs` `(B, 1)`, `attention` `(B, 1, T, S)`, where T is
        `min(2 * S + 10, max_length)`.

    Example:

        result = greedy_search(model, source_ids)
        best = result.ids[:, 0, :]          # (B, T)
    """
    strategy = Greedy(length_penalty, coverage_penalty, length_normalization, alignments)
    return decode(model, source_ids, strategy, max_length, shortlist)
