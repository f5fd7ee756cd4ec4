"""Translation quality metrics: sacreBLEU corpus BLEU and chrF, and exact match.

BLEU and chrF are computed by `sacrebleu` itself (never re-implemented here), so the
numbers and their signatures compare with published ones. Short, space-free targets such
as `2021-03-03` are a single word to the default `13a` tokenizer, which leaves word-level
BLEU with no 2-, 3- or 4-grams; score them with `tokenize="char"` instead (the choice is
recorded in the signature). Several references per sentence give sacreBLEU's
multi-reference BLEU and chrF; the signatures then say `nrefs:N` (`nrefs:var` when the
number varies from sentence to sentence).
"""

import dataclasses

from sacrebleu.metrics import BLEU, CHRF

BLEU_TOKENIZERS = tuple(BLEU.TOKENIZERS)


@dataclasses.dataclass(frozen=True)
class Scores:
    """Corpus scores of hypotheses against their references.

    Fields:
      bleu: corpus BLEU, 0-100.
      chrf: corpus chrF, 0-100.
      exact_match: share of hypotheses equal to one of their references after stripping, 0-1.
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
    """Share (0-1) of hypotheses equal to (one of) their reference(s), surrounding whitespace ignored.

    `references` as in `score`: one str, or a sequence of str, per hypothesis.
    """
    _check_lengths(hypotheses, references)
    if not hypotheses:
        return 0.0
    hits = sum(
        h.strip() in {r.strip() for r in _as_tuple(refs)} for h, refs in zip(hypotheses, references)
    )
    return hits / len(hypotheses)


def score(hypotheses, references, bleu_tokenize="13a"):
    """Corpus BLEU, chrF and exact match of `hypotheses` against `references`.

    Args:
      hypotheses: list of str, one per sentence.
      references: list, the same length, of str (one reference per sentence) or of
        sequences of str (several; their number may vary, at least one each).
      bleu_tokenize: a sacreBLEU tokenizer name (`"13a"`, `"char"`, `"intl"`, ...).

    Returns:
      `Scores`.
    """
    hypotheses, references = list(hypotheses), list(references)
    _check_lengths(hypotheses, references)
    bleu = bleu_metric(bleu_tokenize)
    if not hypotheses:
        raise ValueError("cannot score an empty set of sentences")
    chrf = CHRF()
    streams = reference_streams(references)
    bleu_score = bleu.corpus_score(hypotheses, streams)
    chrf_score = chrf.corpus_score(hypotheses, streams)
    return Scores(
        bleu=float(bleu_score.score),
        chrf=float(chrf_score.score),
        exact_match=exact_match(hypotheses, references),
        bleu_signature=str(bleu.get_signature()),
        chrf_signature=str(chrf.get_signature()),
        sentences=len(hypotheses),
    )


def check_bleu_tokenize(name):
    """A `ValueError` naming the choices unless `name` is a sacreBLEU tokenizer that loads here (`bleu_metric`)."""
    bleu_metric(name)


def bleu_metric(name):
    """sacreBLEU's `BLEU` with tokenizer `name`; a `ValueError` naming the choices unless it is one that loads here.

    Some load more than their name: `ja-mecab` and `ko-mecab` need extra packages, and `spm`, `flores101`,
    `flores200` and `spBLEU-1K` download a SentencePiece model on first use. Loading it now, not after a
    test set is translated or an epoch trained, turns a missing package or network into this error.
    """
    if name not in BLEU_TOKENIZERS:
        raise ValueError(f"unknown BLEU tokenizer {name!r}, expected one of {list(BLEU_TOKENIZERS)}")
    try:
        return BLEU(tokenize=name)
    except Exception as error:  # sacreBLEU's RuntimeError (a missing package), URLError (no network), ...
        reason = " ".join(str(error).split()) or type(error).__name__
        raise ValueError(f"sacreBLEU cannot load BLEU tokenizer {name!r} here ({reason}); expected its "
                         "extra packages and its first download, or another tokenizer such as '13a'") from None


def reference_streams(references):
    """Per-sentence references -> sacreBLEU's reference streams.

    Args:
      references: list of str, or of sequences of str, one entry per sentence.

    Returns:
      list of N lists (N = most references of a sentence), each one str per sentence;
      `None` where a sentence has fewer than N (sacreBLEU skips those).
    """
    per_sentence = [_as_tuple(refs) for refs in references]
    for index, refs in enumerate(per_sentence):
        if not refs or not all(isinstance(r, str) for r in refs):
            raise ValueError(f"sentence {index}: expected one or more str references, got {refs!r}")
    count = max((len(refs) for refs in per_sentence), default=1)
    return [[refs[k] if k < len(refs) else None for refs in per_sentence] for k in range(count)]


def _as_tuple(refs):
    return (refs,) if isinstance(refs, str) else tuple(refs)


def _check_lengths(hypotheses, references):
    if len(hypotheses) != len(references):
        raise ValueError(
            f"expected one hypothesis per reference, got {len(hypotheses)} hypotheses "
            f"and {len(references)} references"
        )
