"""An export's `max_target_length`: every search stops there, as the Keras search with that `max_length`;
a workdir's export takes it from the training config (targets cut to N tokens: N + 1 with </s>)."""

import json
import os

import numpy as np
import tensorflow as tf

from export_test_model import (BEAM_WIDTH, LENGTH_PENALTY, MAX_SOURCE_LENGTH, TEST_SOURCES, as_str, decode_all,
                               reference_ids, write_workdir)
from zoo import constants
from zoo.decoding import beam_search, greedy_search
from zoo.export import export_saved_model, export_workdir
from zoo.models.workdir import decoding_settings, read_config

CAP = 5  # below the toy dates' 10 characters + </s>: every translation is cut


def test_every_search_stops_at_the_cap(parts, loaded, tmp_path):
    model, source_tokenizer, target_tokenizer = parts
    path = export_saved_model(*parts, str(tmp_path), beam_width=BEAM_WIDTH, length_penalty=LENGTH_PENALTY,
                              max_source_length=MAX_SOURCE_LENGTH, max_target_length=CAP)
    capped = tf.saved_model.load(path)
    ids, source = reference_ids(source_tokenizer, TEST_SOURCES), tf.constant(TEST_SOURCES)
    greedy = as_str(capped.signatures["greedy"](source=source)["translation"])
    ref = greedy_search(model, ids, length_penalty=LENGTH_PENALTY, max_length=CAP)
    assert greedy == [hyps[0] for hyps in decode_all(target_tokenizer, ref.ids)]
    assert max(len(text) for text in greedy) <= CAP
    assert greedy != as_str(loaded.signatures["greedy"](source=source)["translation"])  # the uncapped export
    beam = capped.signatures["beam_search"](source=source, beam_width=tf.constant(3), num_hypotheses=tf.constant(2),
                                            length_penalty=tf.constant(0.6))
    ref = beam_search(model, ids, beam_width=3, num_hypotheses=2, length_penalty=0.6, max_length=CAP)
    assert [as_str(row) for row in beam["translations"].numpy()] == decode_all(target_tokenizer, ref.ids)
    np.testing.assert_allclose(beam["scores"].numpy(), ref.scores.numpy(), rtol=1e-5, atol=1e-5)
    default = as_str(capped.signatures["serving_default"](source=source)["translation"])
    assert max(len(text) for text in default) <= CAP


def test_a_workdir_export_is_capped_as_its_training_cut_targets(parts, tmp_path):
    config = {"max_source_length": MAX_SOURCE_LENGTH, "final_beam_width": BEAM_WIDTH, "max_target_length": CAP - 1}
    workdir = write_workdir(str(tmp_path / "run"), *parts, config)
    assert decoding_settings(read_config(workdir))["max_target_length"] == CAP
    path = export_workdir(workdir)
    with open(os.path.join(path, constants.ASSETS_EXTRA_DIR, constants.SETTINGS_FILE), encoding="utf-8") as f:
        assert json.load(f)["max_target_length"] == CAP


def test_a_workdir_that_did_not_cut_its_targets_has_no_cap(parts, tmp_path):
    workdir = write_workdir(str(tmp_path / "run"), *parts, {"max_source_length": MAX_SOURCE_LENGTH})
    assert "max_target_length" not in decoding_settings(read_config(workdir))
