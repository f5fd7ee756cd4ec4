"""The dataset registry: `dates`, `tsv` and `tfds` register themselves; the trainer asks it for pairs and resume fields.

`tfds` on TFDS's mock data: tests/data/test_data_tfds.py.
"""

import os
import re

import ml_collections
import pytest

from zoo.data import DataError, dates_splits, datasets, write_tsv
from zoo.data.datasets import registry


def recipe(**fields):
    """The data fields of a recipe: `dataset`, `seed` and every dataset's own."""
    config = ml_collections.ConfigDict(dict(dataset="dates", seed=0, **datasets.config_fields()))
    config.update(fields)
    return config


def test_the_built_in_datasets_and_their_fields():
    assert datasets.names() == ["dates", "tfds", "tsv"]
    assert datasets.config_fields() == {
        "dates_train_size": 20000, "dates_dev_size": 1000, "dates_seed": 0,
        "dates_languages": "en,fr,es,de,it,pt", "tfds_name": "", "tfds_data_dir": "", "tfds_train_split": "train",
        "tfds_dev_split": "validation", "tfds_reverse": False, "tfds_max_train_pairs": 0,
        "train_tsv": "", "dev_tsv": "", "max_bad_fraction": 0.1,
    }  # fmt: skip


def test_every_dataset_field_has_a_comment():
    directory = os.path.dirname(datasets.__file__)
    for name in datasets.names():
        with open(os.path.join(directory, f"{name}.py"), encoding="utf-8") as f:
            lines = [line for line in f if re.match(r'\s+"\w+": ', line)]
        assert sorted(re.search(r'"(\w+)"', line).group(1) for line in lines) == sorted(datasets.get(name).fields)
        assert all("  # " in line for line in lines), lines


def test_dates_are_the_generated_splits():
    config = recipe(dates_train_size=30, dates_dev_size=5, dates_seed=3, dates_languages="fr, de")
    splits = datasets.load(config)
    expected = dates_splits(seed=3, train=30, dev=5, test=0, languages=("fr", "de"))
    assert splits == {"train": expected["train"], "dev": expected["dev"]}
    assert datasets.resume_fields(config) == ("dataset", "dates_seed", "dates_languages")


def test_tsv_files_and_the_held_out_dev_set(tmp_path):
    pairs = [(f"s{i}", f"t{i}") for i in range(120)]
    train = write_tsv(str(tmp_path / "train.tsv"), pairs)
    dev = write_tsv(str(tmp_path / "dev.tsv"), pairs[:3])
    config = recipe(dataset="tsv", train_tsv=train, dev_tsv=dev)
    assert datasets.load(config) == {"train": pairs, "dev": pairs[:3]}
    assert datasets.resume_fields(config) == ("dataset", "train_tsv")
    held = datasets.load(recipe(train_tsv=train, seed=5))  # a training file selects tsv, even under "dates"
    assert len(held["dev"]) == 2 and len(held["train"]) == 118  # 2% held out
    assert sorted(held["dev"] + held["train"]) == sorted(pairs)
    assert datasets.load(recipe(train_tsv=train, seed=5)) == held  # seeded
    assert datasets.dataset_name(recipe(train_tsv=train)) == "tsv"


def test_a_dev_file_may_give_several_references(tmp_path):
    train = write_tsv(str(tmp_path / "train.tsv"), [("a", "b"), ("c", "d")])
    dev = tmp_path / "dev.tsv"
    dev.write_text("s1\tr1\tr1 again\ns2\tr2\n", encoding="utf-8")
    splits = datasets.load(recipe(train_tsv=train, dev_tsv=str(dev)))
    assert splits["dev"] == [("s1", "r1", "r1 again"), ("s2", "r2")]  # training reads one target a line
    with pytest.raises(DataError, match=r"dev\.tsv: 1 malformed line|dev\.tsv:1: expected 'source<TAB>target'"):
        datasets.load(recipe(train_tsv=str(dev)))


def test_errors_name_what_was_wrong(tmp_path):
    with pytest.raises(DataError, match=r"unknown dataset 'wmt'; expected one of \['dates', 'tfds', 'tsv'\]"):
        datasets.load(recipe(dataset="wmt"))
    with pytest.raises(DataError, match=r"unknown dataset 'wmt'"):
        datasets.resume_fields(recipe(dataset="wmt"))
    with pytest.raises(DataError, match="--dev_tsv needs --train_tsv"):
        datasets.load(recipe(dev_tsv="dev.tsv"))
    with pytest.raises(DataError, match="dataset 'tsv' needs --train_tsv"):
        datasets.load(recipe(dataset="tsv"))
    one = write_tsv(str(tmp_path / "one.tsv"), [("a", "b")])
    with pytest.raises(DataError, match="1 pair\\(s\\) are too few to hold out a dev set"):
        datasets.load(recipe(train_tsv=one))


def test_a_new_dataset_is_one_registration():
    @datasets.register("toy", {"toy_size": 2}, resume_fields=("toy_size",))
    def load(config):
        return {"train": [("a", "b")] * config.toy_size, "dev": []}

    try:
        assert "toy" in datasets.names() and datasets.config_fields()["toy_size"] == 2
        config = recipe(dataset="toy", toy_size=3)
        assert datasets.resume_fields(config) == ("dataset", "toy_size")
        with pytest.raises(DataError, match="the dev set is empty"):
            datasets.load(config)
        with pytest.raises(ValueError, match=r"already registered"):
            datasets.register("other", {"toy_size": 1})(load)
    finally:
        registry._DATASETS.pop("toy")
