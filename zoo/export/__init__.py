"""Export to TF Serving: SavedModels with text in, text out (docs/interfaces.md, "The SavedModel").

- `export_saved_model(model, source_tokenizer, target_tokenizer, export_dir, version=None, ...)`
  and `export_workdir(workdir, export_dir=None, version=None)`: the versioned, atomic writer
  (`zoo.export.writer`); `export_of_best_model(workdir)`: the version already written from
  the workdir's current `best.keras`, if any.
- `SIGNATURES`: the table of the serving signatures, their names, methods, inputs and warmup
  inputs (`zoo.export.signatures`); `ServingModule`: the `tf.Module` whose methods compute
  them (`zoo.export.serving_module`).
- `write_warmup_requests`, `read_warmup_requests`: TF Serving's warmup file (`zoo.export.warmup`).

Translating with an export (`zoo-translate`, `zoo-eval`) is `zoo.inference`; reading a
training workdir is `zoo.models.workdir`.
"""

from zoo.export.serving_module import ServingModule
from zoo.export.signatures import SIGNATURES, SignatureSpec
from zoo.export.warmup import read_warmup_requests, write_warmup_requests
from zoo.export.writer import existing_versions, export_of_best_model, export_saved_model, export_workdir

__all__ = [
    "SIGNATURES",
    "ServingModule",
    "SignatureSpec",
    "existing_versions",
    "export_of_best_model",
    "export_saved_model",
    "export_workdir",
    "read_warmup_requests",
    "write_warmup_requests",
]
