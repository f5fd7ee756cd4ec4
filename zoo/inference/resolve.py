"""What `--model PATH` names: a SavedModel, a model base path of versions, or a training workdir.

Standard library only, so that resolving a path costs nothing at start-up.
"""

import os

from zoo import constants

SAVED_MODEL = "saved_model"
WORKDIR = "workdir"


def _latest_version(base_path):
    """The newest complete version directory under `base_path`, or None."""
    found = constants.version_directories(base_path)
    return os.path.join(base_path, found[max(found)]) if found else None


def resolve_model(path):
    """What `--model PATH` names: `("saved_model", dir)` or `("workdir", dir)`.

    Accepts a SavedModel directory, a model base path holding numeric versions (the
    newest is used), or a `zoo-train` workdir (its newest `export/<version>` if it has
    one, else the workdir itself, decoded from `best.keras`).

    Raises:
      FileNotFoundError: `path` is none of these.
    """
    if not os.path.isdir(path):
        found = "is a file, not a directory" if os.path.exists(path) else "no such directory"
        raise FileNotFoundError(f"{path}: {found}; expected a SavedModel, an export directory or a zoo-train workdir")
    if os.path.isfile(os.path.join(path, constants.SAVED_MODEL_FILE)):
        return SAVED_MODEL, path
    latest = _latest_version(path)
    if latest:
        return SAVED_MODEL, latest
    if os.path.isfile(os.path.join(path, constants.BEST_MODEL_FILE)):
        latest = _latest_version(os.path.join(path, constants.EXPORT_DIR))
        return (SAVED_MODEL, latest) if latest else (WORKDIR, path)
    raise FileNotFoundError(
        f"{path}: found neither {constants.SAVED_MODEL_FILE}, numeric version directories, nor "
        f"{constants.BEST_MODEL_FILE}; expected a SavedModel, an export directory or a zoo-train workdir"
    )


def training_config_path(path):
    """The `config.json` of the training run a model path comes from, or None.

    Looks in `path` and up to three levels above it (a workdir, its `export/`, a version
    directory, ...).
    """
    directory = os.path.abspath(path)
    for _ in range(4):
        config_path = os.path.join(directory, constants.CONFIG_FILE)
        if os.path.isfile(config_path):
            return config_path
        directory = os.path.dirname(directory)
    return None
