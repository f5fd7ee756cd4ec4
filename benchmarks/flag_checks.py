"""Checks the benchmarks share for their flags: one line naming the flag, before any work.

Imported by the scripts in this folder (run as `python benchmarks/NAME.py`, which puts
this folder on `sys.path`); standard library and absl only, so a bad flag costs no
TensorFlow import.
"""

import os

from absl import app


def positive_integers(name, values, example="1,64"):
    """The list flag `--name`'s `values` as integers, each >= 1, or a usage error naming it."""
    if not values or not all(value.isdigit() and int(value) >= 1 for value in values):
        raise app.UsageError(f"--{name}={','.join(values or [])}: expected integers >= 1, e.g. {example}")
    return [int(value) for value in values]


def model_files(workdir, tsv):
    """A usage error naming `--workdir` or `--tsv` unless each one given is there (a folder, a file)."""
    if workdir and not os.path.isdir(workdir):
        raise app.UsageError(f"--workdir={workdir}: not a directory (a zoo-train workdir)")
    if tsv and not os.path.isfile(tsv):
        raise app.UsageError(f"--tsv={tsv}: no such file")


def corpus_files(data_dir, names):
    """A usage error naming `--data_dir` unless it holds every file in `names` (e.g. train.tsv)."""
    missing = [name for name in names if not os.path.isfile(os.path.join(data_dir, name))]
    if missing:
        raise app.UsageError(f"--data_dir={data_dir}: no {', '.join(missing)} there "
                             "(make_debian_corpus.py --out DIR writes train.tsv, dev.tsv and test.tsv)")
