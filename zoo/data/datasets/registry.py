"""The registry of named datasets: what `zoo-train` trains on, chosen by the recipe's `dataset` field."""

import dataclasses
from typing import Callable

from zoo.data.tsv import DataError

_DATASETS = {}


@dataclasses.dataclass(frozen=True)
class Dataset:
    """A named source of training and dev pairs.

    Attributes:
        name: the value of the recipe's `dataset` field.
        load: `config -> {"train": [(source, target), ...], "dev": [(source, reference, ...), ...]}`:
            a dev item is a source and one or more references (scored with all of them).
        fields: `{field: default}`, the recipe fields the dataset reads (added to every recipe).
        resume_fields: the fields that fix the pairs: a workdir trained with other values
            cannot be resumed.
        selected_by: a field that, when set, selects this dataset whatever `dataset` says.
    """

    name: str
    load: Callable
    fields: dict
    resume_fields: tuple
    selected_by: str = None


def register(name, fields, resume_fields=(), selected_by=None):
    """Decorator of a dataset's `load(config)` function: registers it under `name`."""

    def decorate(load):
        clashes = [f for d in _DATASETS.values() for f in fields if f in d.fields]
        if name in _DATASETS or clashes:
            raise ValueError(f"dataset {name!r}: name or fields {clashes} already registered; expected new ones")
        _DATASETS[name] = Dataset(name, load, dict(fields), tuple(resume_fields), selected_by)
        return load

    return decorate


def names():
    """The registered dataset names, sorted."""
    return sorted(_DATASETS)


def get(name):
    """The `Dataset` registered as `name`; DataError listing the registered ones otherwise."""
    if name not in _DATASETS:
        raise DataError(f"unknown dataset {name!r}; expected one of {names()}")
    return _DATASETS[name]


def config_fields():
    """`{field: default}` of every registered dataset, for the recipes' base config."""
    return {field: value for name in names() for field, value in _DATASETS[name].fields.items()}


def dataset_name(config):
    """The dataset a recipe trains on: `config.dataset`, unless a dataset's `selected_by` field is set."""
    for dataset in _DATASETS.values():
        if dataset.selected_by and config.get(dataset.selected_by):
            return dataset.name
    return config.dataset


def resume_fields(config):
    """The config fields that must not change when a workdir is resumed: `dataset` and the dataset's own."""
    return ("dataset",) + get(dataset_name(config)).resume_fields


def load(config):
    """The training and dev pairs of a recipe: `{"train": [(source, target), ...], "dev": [...]}`.

    A dev item is `(source, reference)`, or `(source, ref1, ref2, ...)` with several references.

    Raises:
        DataError: an unknown dataset, missing or malformed files, an empty split.
    """
    splits = get(dataset_name(config)).load(config)
    for split in ("train", "dev"):
        if not splits[split]:
            raise DataError(f"the {'training' if split == 'train' else 'dev'} set is empty: "
                            "expected at least one source<TAB>target pair")
    return {"train": list(splits["train"]), "dev": list(splits["dev"])}
