"""Translation quality metrics: sacreBLEU corpus BLEU and chrF, and exact match.

BLEU and chrF are computed by `sacrebleu` itself (never re-implemented here), so the
numbers and their signatures compare with published ones. Short, space-free targets such
as `2021-03-03` are a single word to the default `13a` tokenizer, which leaves word-level
BLEU with no 2-, 3- or 4-grams; score them with `tokenize="char"` instead (the choice is
recorded in the signature).
"""

import dataclasses

from sacrebleu.metrics import BLEU, CHRF

BLEU_TOKENIZERS = tuple(BLEU.TOKENIZERS)


@dataclasses.dataclass(frozen=True)
class Scores:
    """Corpus scores of hypotheses against one reference each.

    Fields:
      bleu: corpus BLEU, 0-100.
      chrf: corpus chrF, 0-100.
      exact_match: share of hypotheses equal to their reference after stripping, 0-1.
      bleu_signature, chrf_signature: sacreBLEU's signatures (tokenizer, smoothing, ...).
      sentences: number of sentence pairs scored.
    """

    bleu: float
    chrf: float
    exact_match: float
    bleu_signature: str
    chrf_signature: str
    sentences: int

    def as_dict(self):
        return dataclasses.asdict(self)


def exact_match(hypotheses, references):
    """Share (0-1) of hypotheses equal to their reference, surrounding whitespace ignored."""
    _check_lengths(hypotheses, references)
    if not hypotheses:
        return 0.0
    hits = sum(h.strip() == r.strip() for h, r in zip(hypotheses, references))
    return hits / len(hypotheses)


def score(hypotheses, references, bleu_tokenize="13a"):
    """Corpus BLEU, chrF and exact match of `hypotheses` against `references`.

    Args:
      hypotheses: list of str, one per sentence.
      references: list of str, the same length.
      bleu_tokenize: a sacreBLEU tokenizer name (`"13a"`, `"char"`, `"intl"`, ...).

    Returns:
      `Scores`.
    """
    hypotheses, references = list(hypotheses), list(references)
    _check_lengths(hypotheses, references)
    if bleu_tokenize not in BLEU_TOKENIZERS:
        raise ValueError(f"unknown BLEU tokenizer {bleu_tokenize!r}, expected one of {list(BLEU_TOKENIZERS)}")
    if not hypotheses:
        raise ValueError("cannot score an empty set of sentences")
    bleu = BLEU(tokenize=bleu_tokenize)
    chrf = CHRF()
    bleu_score = bleu.corpus_score(hypotheses, [references])
    chrf_score = chrf.corpus_score(hypotheses, [references])
    return Scores(
        bleu=float(bleu_score.score),
        chrf=float(chrf_score.score),
        exact_match=exact_match(hypotheses, references),
        bleu_signature=str(bleu.get_signature()),
        chrf_signature=str(chrf.get_signature()),
        sentences=len(hypotheses),
    )


def _check_lengths(hypotheses, references):
    if len(hypotheses) != len(references):
        raise ValueError(
            f"expected one hypothesis per reference, got {len(hypotheses)} hypotheses "
            f"and {len(references)} references"
        )
