"""A translation reads a source up to the export's cap, not up to the training's `max_source_length`."""

import json
import os

import ml_collections
import pytest
import tensorflow as tf

from export_test_model import as_str, write_workdir
from zoo.constants import DEFAULT_MAX_SOURCE_LENGTH
from zoo.export import export_workdir
from zoo.models.workdir import decoding_settings, source_cap

LONG = "le 4 avril 1999"  # 15 characters: longer than the training cap below


@pytest.mark.parametrize("config, cap", [
    ({}, DEFAULT_MAX_SOURCE_LENGTH),
    ({"max_source_length": 0}, DEFAULT_MAX_SOURCE_LENGTH),  # 0: the training kept every length
    ({"max_source_length": 80}, DEFAULT_MAX_SOURCE_LENGTH),
    ({"data": {"max_source_length": 300}}, 300),  # a model trained on longer sources reads them
])
def test_source_cap_is_the_training_cap_but_never_below_the_default(config, cap):
    config = ml_collections.ConfigDict(config)
    assert source_cap(config) == cap
    assert decoding_settings(config)["max_source_length"] == cap
    assert decoding_settings(config, max_source_length=6)["max_source_length"] == 6  # zoo-export's flag wins


def _settings(path):
    with open(os.path.join(path, "assets.extra", "zoo_export.json"), encoding="utf-8") as f:
        return json.load(f)


def _source_tokens(path, text):
    beam = tf.saved_model.load(path).signatures["beam_search"](
        source=tf.constant([text]), beam_width=tf.constant(2), num_hypotheses=tf.constant(1),
        length_penalty=tf.constant(0.6))
    return as_str(beam["source_tokens"])


def test_an_export_reads_sources_longer_than_the_training_cap_whole(parts, tmp_path):
    workdir = write_workdir(str(tmp_path / "run"), *parts, {"max_source_length": 4, "max_target_length": 12})
    path = export_workdir(workdir)
    settings = _settings(path)
    assert (settings["max_source_length"], settings["max_target_length"]) == (DEFAULT_MAX_SOURCE_LENGTH, 13)
    assert "".join(_source_tokens(path, LONG)).replace("▁", " ") == LONG  # all 15 characters, not 4

    cut = export_workdir(workdir, max_source_length=6)  # asked for: cut there
    assert _source_tokens(cut, LONG) == ["l", "e", "▁", "4", "▁", "a"]


def test_a_workdir_trained_without_a_source_cap_exports(parts, tmp_path):
    # max_source_length=0 (keep every length) once made the export refuse the workdir: "must be an int >= 1".
    workdir = write_workdir(str(tmp_path / "run"), *parts, {"max_source_length": 0, "max_target_length": 0})
    settings = _settings(export_workdir(workdir))
    assert settings["max_source_length"] == DEFAULT_MAX_SOURCE_LENGTH
