"""Writing exports: `export_dir/<version>/`, one complete SavedModel per version, atomically.

A version is written to a hidden temporary directory, fsynced and renamed into place
(`zoo.atomic_write.atomic_directory`), so a server polling `export_dir` (TF Serving,
`zoo-serve`) never loads half a version, and the temporary directory of an export killed
half way is removed by the next one. A version holds the vocabularies (and SentencePiece
models) in `assets/`, the export's defaults and the op libraries it needs in
`assets.extra/zoo_export.json` (with the SHA-256 of the `best.keras` it came from, for a
workdir's export) and TF Serving warmup requests in `assets.extra/tf_serving_warmup_requests`.
"""

import hashlib
import os
import tempfile

import tensorflow as tf

from zoo import constants
from zoo.atomic_write import atomic_directory, remove_stale_temporaries, write_json
from zoo.export import warmup
from zoo.progress import Progress
from zoo.export.serving_module import ServingModule
from zoo.models.workdir import decoding_settings, load_workdir, read_config, workdir_shortlist

# The complete versions under a model base path (the rule TF Serving and zoo-serve apply).
existing_versions = constants.saved_model_versions


def next_version(export_dir):
    """One more than the newest complete version under `export_dir` (1 if none), past any entry of that
    name: an incomplete `2/` left there by hand or by a copy would otherwise make the default collide."""
    version = (existing_versions(export_dir) or [0])[-1] + 1
    while os.path.exists(os.path.join(export_dir, str(version))):
        version += 1
    return version


def export_saved_model(
    model,
    source_tokenizer,
    target_tokenizer,
    export_dir,
    version=None,
    *,
    beam_width=constants.DEFAULT_BEAM_WIDTH,
    length_penalty=constants.DEFAULT_LENGTH_PENALTY,
    coverage_penalty=0.0,
    max_source_length=constants.DEFAULT_MAX_SOURCE_LENGTH,
    max_beam_width=constants.DEFAULT_MAX_BEAM_WIDTH,
    max_target_length=None,
    shortlist=None,
    beam_stopping="exact",
    warmup_sources=None,
    provenance=None,
):
    """Writes `export_dir/<version>/`, a SavedModel TF Serving loads as it is.

    Args:
      model, source_tokenizer, target_tokenizer: see `ServingModule`.
      export_dir: the model base path (TF Serving's `--model_base_path`).
      version: positive int; None for one more than the newest version there (or 1), past
        any incomplete directory of that name.
      beam_width, length_penalty, coverage_penalty, max_source_length, max_beam_width,
        max_target_length, shortlist, beam_stopping: see `ServingModule`.
      warmup_sources: a few source sentences for the warmup requests; None builds
        them from the source vocabulary.
      provenance: a dict added to `zoo_export.json` (where the model came from).

    Returns:
      The path of the new version directory.

    Raises:
      FileExistsError: `export_dir/<version>` exists (a served version is never replaced).
    """
    if version is None:
        version = next_version(export_dir)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ValueError(f"version must be a positive int, received {version!r}.")
    final_dir = os.path.join(export_dir, str(version))
    if os.path.exists(final_dir):
        raise FileExistsError(f"{final_dir} exists: choose another version or remove it first")
    module = ServingModule(
        model,
        source_tokenizer,
        target_tokenizer,
        beam_width=beam_width,
        length_penalty=length_penalty,
        coverage_penalty=coverage_penalty,
        max_source_length=max_source_length,
        max_beam_width=max_beam_width,
        max_target_length=max_target_length,
        shortlist=shortlist,
        beam_stopping=beam_stopping,
    )
    if warmup_sources is None:
        warmup_sources = warmup.sources_from_vocabulary(source_tokenizer)
    os.makedirs(export_dir, exist_ok=True)
    remove_stale_temporaries(export_dir)  # what an export killed half way left behind
    # Hidden and non-numeric until the rename: TF Serving and zoo-serve ignore it.
    with atomic_directory(final_dir, replace=False) as temp_dir:
        _write_version(module, temp_dir, warmup_sources, provenance or {})
    return final_dir


def _write_version(module, directory, warmup_sources, provenance):
    """The SavedModel of `module` with its assets, settings and warmup requests, in `directory`."""
    signatures = module.signatures()
    with Progress("export", total=len(signatures) + 2, unit="steps") as progress:
        for function in signatures.values():
            function.get_concrete_function()  # tracing each search is most of the time; the save reuses it
            progress.update(1)
        with tempfile.TemporaryDirectory() as asset_dir:
            module.source_assets = _tokenizer_assets(module.source_tokenizer, asset_dir, "source")
            module.target_assets = _tokenizer_assets(module.target_tokenizer, asset_dir, "target")
            tf.saved_model.save(module, directory, signatures=signatures)
        progress.update(1)
        extra_dir = os.path.join(directory, constants.ASSETS_EXTRA_DIR)
        os.makedirs(extra_dir, exist_ok=True)
        settings = dict(module.settings(), **provenance)
        settings[constants.OP_LIBRARY_FILES] = constants.op_library_files(
            tf, settings[constants.OP_LIBRARIES], _graph_op_types(directory))
        write_json(os.path.join(extra_dir, constants.SETTINGS_FILE), settings)
        warmup.write_warmup_requests(directory, warmup_sources, module.settings())
        progress.update(1)


def _graph_op_types(directory):
    """The op types that the SavedModel in `directory` runs: its graph's and its functions'."""
    from tensorflow.core.protobuf import saved_model_pb2

    saved = saved_model_pb2.SavedModel()
    with open(os.path.join(directory, constants.SAVED_MODEL_FILE), "rb") as f:
        saved.ParseFromString(f.read())
    types = set()
    for graph in saved.meta_graphs:
        types.update(node.op for node in graph.graph_def.node)
        types.update(node.op for function in graph.graph_def.library.function for node in function.node_def)
    return types


def _tokenizer_assets(tokenizer, directory, side):
    """SavedModel asset files of one side: `<side>_vocab.txt` (one token per line, in id order)
    and the files the tokenizer runs from (`<side>_sentencepiece.model`), for users to inspect."""
    files = {"vocab.txt": ("\n".join(tokenizer.vocab) + "\n").encode("utf-8"), **tokenizer.model_files()}
    assets = []
    for name, content in files.items():
        path = os.path.join(directory, f"{side}_{name}")
        with open(path, "wb") as f:
            f.write(content)
        assets.append(tf.saved_model.Asset(path))
    return assets


def export_workdir(workdir, export_dir=None, version=None, warmup_sources=None, shortlist=None, **overrides):
    """Exports a workdir's `best.keras` to `export_dir/<version>` (default `workdir/export`).

    Decoding defaults come from `config.json` (`beam_width` or else `final_beam_width`,
    `length_penalty`, `coverage_penalty`, `beam_stopping`, `max_source_length`, at any depth; the
    config's `max_target_length` N caps the searches at N + 1 tokens, end token included) unless given
    in `overrides`. `shortlist`: True decodes with the workdir's `vocab/shortlist.npz`, False
    with the whole vocabulary, None as its config says (`zoo.models.workdir.workdir_shortlist`).

    Returns:
      The path of the new version directory.
    """
    model, source_tokenizer, target_tokenizer, config = load_workdir(workdir)
    # Where the model came from, and the sacreBLEU tokenizer it was scored with (zoo-eval's default for
    # the export once it is moved away from its workdir).
    provenance = {BEST_MODEL_DIGEST: best_model_digest(workdir), constants.BLEU_TOKENIZE: config.get("bleu_tokenize")}
    return export_saved_model(
        model,
        source_tokenizer,
        target_tokenizer,
        os.path.join(workdir, constants.EXPORT_DIR) if export_dir is None else export_dir,
        version,
        shortlist=workdir_shortlist(workdir, config, shortlist),
        warmup_sources=warmup_sources,
        provenance=provenance,
        **decoding_settings(config, **overrides),
    )


BEST_MODEL_DIGEST = "best_model_sha256"  # the zoo_export.json key naming the best.keras a version came from


def best_model_digest(workdir):
    """SHA-256 (hex) of the workdir's `best.keras`."""
    digest = hashlib.sha256()
    with open(os.path.join(workdir, constants.BEST_MODEL_FILE), "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def export_of_best_model(workdir, export_dir=None):
    """The newest version under `export_dir` (default `workdir/export`) written from this very
    `best.keras` with the shortlist its config asks for, or None: a rerun of a finished workdir
    reuses it instead of writing a copy."""
    export_dir = os.path.join(workdir, constants.EXPORT_DIR) if export_dir is None else export_dir
    digest = None
    table = workdir_shortlist(workdir, read_config(workdir))
    found = constants.version_directories(export_dir)
    for version in sorted(found, reverse=True):
        path = os.path.join(export_dir, found[version])
        try:
            settings = constants.read_export_settings(path)
        except (OSError, ValueError):  # an export of another kind: not ours to reuse
            continue
        recorded = settings.get(BEST_MODEL_DIGEST)
        if recorded is None:  # no zoo_export.json, or one without a digest
            continue
        digest = digest or best_model_digest(workdir)
        if recorded == digest and settings.get("shortlist") == (table and table.settings()):
            return path
    return None
