"""Scoring translations against references: training's dev evaluation and `zoo-eval`."""

import os
import time

from zoo import constants, metrics, startup
from zoo.constants import read_json_object
from zoo.data.tsv import read_tsv_report  # standard library only: no TensorFlow tokenizers, no Keras
from zoo.inference.batching import translate_in_batches
from zoo.inference.loading import load_translate_fn
from zoo.inference.resolve import SAVED_MODEL, resolve_model, training_config_path
from zoo.progress import Progress


def evaluate(translator, pairs, beam_width=1, batch_size=256, bleu_tokenize="13a", show_progress=None,
             label="dev BLEU"):
    """Translates the sources of `pairs` with a `KerasTranslator` and scores them against their references.

    Args:
      translator: a `KerasTranslator`.
      pairs: list of `(source, reference)` str pairs, or `(source, ref1, ref2, ...)` tuples
        (multi-reference BLEU and chrF).
      beam_width: 1 for greedy search, else beam search of that width.
      batch_size: sentences decoded at once.
      bleu_tokenize: sacreBLEU tokenizer.
      show_progress: None reports the sentences decoded on a terminal (`zoo.progress`), False never.
      label: what the progress line says it does.

    Returns:
      `(scores, hypotheses)`: a `zoo.metrics.Scores` and the list of hypotheses.
    """
    sources = [item[0] for item in pairs]
    with Progress(label, total=len(sources), unit="sentences", enabled=show_progress) as progress:
        hypotheses = translator.translate(sources, beam_width=beam_width, batch_size=batch_size, progress=progress)
    return metrics.score(hypotheses, [item[1:] for item in pairs], bleu_tokenize=bleu_tokenize), hypotheses


def _bleu_tokenize_of(path):
    """The `bleu_tokenize` the model was trained with, if known: the training config next to a workdir or
    its export, else the one an export recorded in its `zoo_export.json` (an export moved elsewhere)."""
    config_path = training_config_path(path)
    if config_path is not None:
        return read_json_object(config_path).get(constants.BLEU_TOKENIZE)
    try:
        kind, directory = resolve_model(path)
    except FileNotFoundError:
        return None  # the loading names what is wrong with the path
    return constants.read_export_settings(directory).get(constants.BLEU_TOKENIZE) if kind == SAVED_MODEL else None


def evaluate_model(model_path, tsv_path, beam_width=None, batch_size=64, bleu_tokenize=None, shortlist=None,
                   in_flight=1):
    """Scores an export (or a training workdir) on a TSV test set, as `zoo-eval` prints it.

    Args:
      model_path: a SavedModel, an export base directory or a `zoo-train` workdir (see
        `zoo.inference.resolve_model`).
      tsv_path: `source<TAB>reference` lines; further tab-separated columns are further
        references (sacreBLEU's multi-reference BLEU and chrF, `nrefs:N` in the signatures).
      beam_width: None for the export's default search, else beam search of that width.
      batch_size: sentences translated at once.
      bleu_tokenize: sacreBLEU tokenizer; None takes the one the model was trained with
        (its workdir's config.json, else the export's zoo_export.json), else `13a`.
      shortlist: None, True or False: vocabulary selection, see `load_translate_fn`.
      in_flight: batches translated at once (`translate_in_batches`).

    Returns:
      dict: `bleu`, `chrf`, `bleu_signature`, `chrf_signature`, `exact_match`,
      `sentences`, `sentences_per_second`, `seconds`, `model`, `decoding`.
    """
    bleu_tokenize = bleu_tokenize or _bleu_tokenize_of(model_path) or "13a"
    metrics.check_bleu_tokenize(bleu_tokenize)  # before the test set is translated, not after
    test = read_tsv_report(tsv_path, multi_reference=True)
    pairs = test.pairs
    startup.mark("read_test_set", "reading the TSV test set")
    translate, description = load_translate_fn(model_path, beam_width=beam_width, shortlist=shortlist)
    sources = [source.encode("utf-8") for source, _ in pairs]
    started = time.monotonic()
    with Progress("zoo-eval", total=len(sources), unit="sentences") as progress:
        translations = translate_in_batches(translate, sources, batch_size, progress, in_flight)
    hypotheses = [text.decode("utf-8") for text in translations]
    seconds = time.monotonic() - started
    startup.mark("translation", "the other translations")
    scores = metrics.score(hypotheses, test.references, bleu_tokenize=bleu_tokenize)
    startup.mark("scoring", "sacreBLEU's BLEU and chrF")
    return dict(scores.as_dict(), sentences_per_second=len(pairs) / seconds if seconds else None,
                seconds=seconds, model=os.fspath(model_path), decoding=description)
