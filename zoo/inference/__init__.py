"""Translating with a trained model: an export, a model base path or a `zoo-train` workdir.

- `resolve_model(path)`: what `--model PATH` names (a SavedModel, the newest version of a
  model base path, a workdir's newest export, or the workdir's `best.keras`).
- `load_translate_fn(path, beam_width=None)`: one batch of source lines -> translations.
- `batches_by_length`, `translate_in_batches`: the one length-sorted batcher.
- `translate_stream`, `translate_stdin`, `read_line_windows`, `Progress`: `zoo-translate`.
- `evaluate_model(path, tsv)`: `zoo-eval`; `evaluate(translator, pairs)`: dev BLEU.
- `KerasTranslator`: translation with an in-memory Keras model and its tokenizers.

The names are resolved on first use (PEP 562): translating with an export imports neither
Keras nor the model code, so `zoo-translate` starts in seconds.
"""

import importlib

_LAZY = {
    "KerasTranslator": "zoo.inference.keras_translator",
    "Progress": "zoo.progress",
    "batches_by_length": "zoo.inference.batching",
    "evaluate": "zoo.inference.evaluation",
    "evaluate_model": "zoo.inference.evaluation",
    "load_translate_fn": "zoo.inference.loading",
    "read_line_windows": "zoo.inference.stream",
    "resolve_model": "zoo.inference.resolve",
    "translate_in_batches": "zoo.inference.batching",
    "translate_stdin": "zoo.inference.stream",
    "translate_stream": "zoo.inference.stream",
}

__all__ = sorted(_LAZY)


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module 'zoo.inference' has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(list(globals()) + list(_LAZY))
