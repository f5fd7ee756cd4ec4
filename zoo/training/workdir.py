"""The workdir of a training run: `config.json` checked for resume, and held by one run at a time."""

import contextlib
import os

try:
    import fcntl
except ImportError:  # Windows: no advisory locks here, runs are not kept apart
    fcntl = None

from zoo import model_defaults
from zoo.atomic_write import remove_stale_temporaries, write_json
from zoo.constants import VOCAB_DIR, read_json_object
from zoo.data import datasets

# Config fields that fix the data, the vocabulary or the model's shape: a workdir trained
# with other values cannot be resumed.
MODEL_FIELDS = ("model",) + model_defaults.SIZE_FIELDS + model_defaults.CHOICE_FIELDS
VOCAB_FIELDS = (
    "source_tokenizer", "target_tokenizer", "source_vocab_size", "target_vocab_size",
    "vocab_min_count", "lowercase", "shared_vocab", "spm_model_type", "spm_byte_fallback", "spm_normalization",
)  # fmt: skip


def check_config(config, workdir, write=True):
    """Refuses a workdir trained with another model or vocabulary than `config`'s; with `write` (the process that
    writes the workdir), creates `workdir` and removes the files a killed run was writing (temporaries that never
    became the file).

    `config.json` itself is left as it is: `write_config` replaces it once the run is past every check (the
    checkpoint's restore too), so that a refused run leaves the workdir as it was.
    """
    if write:
        os.makedirs(workdir, exist_ok=True)
        for directory in (workdir, os.path.join(workdir, VOCAB_DIR)):
            remove_stale_temporaries(directory)
    path = os.path.join(workdir, "config.json")
    trained = any(os.path.isdir(os.path.join(workdir, d)) for d in ("checkpoints", VOCAB_DIR))
    if os.path.isfile(path):
        saved = read_json_object(path)  # a damaged one is reported, not replaced unread
        changed = [
            f"{field}: {saved.get(field)!r} -> {config[field]!r}"
            for field in MODEL_FIELDS + VOCAB_FIELDS + datasets.resume_fields(config)
            if field in config and field in saved and saved[field] != config[field]
        ]
        if changed and trained:
            raise ValueError(f"workdir {workdir} holds a run with another model or data ({'; '.join(changed)}); "
                             "expected the same config to resume, or a new --workdir")


def write_config(config, workdir):
    """Writes `config` as `workdir/config.json`: what the run trains with, and what a resume is checked against."""
    write_json(os.path.join(workdir, "config.json"), config.to_dict(), sort_keys=True)


@contextlib.contextmanager
def hold_workdir(workdir, write=True):
    """Creates `workdir` and holds it (with `write`) until the block ends: while it does, another run on it
    (another shell's zoo-train, a second notebook) is refused instead of mixing its checkpoints, best model and
    export with this one's. An advisory lock on the directory itself (`flock`), released however the process ends.

    A `workdir` this call created and the run left empty (it failed before writing anything: sizes only the
    model's weights reveal, data that cannot load) is removed again.

    Raises:
      ValueError: another run holds `workdir`.
    """
    if not write or fcntl is None:
        yield
        return
    created = not os.path.exists(workdir)
    os.makedirs(workdir, exist_ok=True)
    fd = os.open(workdir, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ValueError(f"workdir {workdir} is in use by another run that trains in it; expected that run "
                             "to end first, or another --workdir") from None
        except OSError:  # a file system without locks (some network ones): runs are not kept apart there
            pass
        yield
    finally:
        os.close(fd)
        if created and os.path.isdir(workdir) and not os.listdir(workdir):  # (removed meanwhile: nothing to do)
            os.rmdir(workdir)
