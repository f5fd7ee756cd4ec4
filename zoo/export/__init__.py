"""Export to TF Serving: SavedModels with text in, text out, and loading training workdirs.

- `export_saved_model(model, source_tokenizer, target_tokenizer, export_dir, version=None, ...)`
- `export_workdir(workdir, export_dir=None, version=None)`
- `load_workdir(workdir) -> (model, source_tokenizer, target_tokenizer, config)`
- `Translator`: the `tf.Module` whose functions are the serving signatures.
- `zoo.export.translation`: streaming, batched translation with an export (`zoo-translate`).

The names are resolved on first use (PEP 562) so that `zoo.export.translation` can run an
export without importing Keras and the model code: `zoo-translate` starts in seconds.
"""

import importlib

_LAZY = {
    "DEFAULT_BEAM_WIDTH": "zoo.export.saved_model",
    "DEFAULT_LENGTH_PENALTY": "zoo.export.saved_model",
    "DEFAULT_MAX_SOURCE_LENGTH": "zoo.export.saved_model",
    "SIGNATURES": "zoo.export.saved_model",
    "Translator": "zoo.export.saved_model",
    "existing_versions": "zoo.export.saved_model",
    "export_saved_model": "zoo.export.saved_model",
    "export_workdir": "zoo.export.saved_model",
    "load_workdir": "zoo.export.saved_model",
    "read_warmup_requests": "zoo.export.warmup",
    "write_warmup_requests": "zoo.export.warmup",
}

__all__ = sorted(_LAZY)


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module 'zoo.export' has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(list(globals()) + list(_LAZY))
