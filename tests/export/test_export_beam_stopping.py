"""An export's beam stopping rule (`beam_stopping`): the Keras search's, in every beam signature."""

import json
import os

import numpy as np
import pytest
import tensorflow as tf

from export_test_model import BEAM_WIDTH, LENGTH_PENALTY, MAX_SOURCE_LENGTH, TEST_SOURCES, as_str, decode_all, reference_ids
from zoo import constants
from zoo.decoding import beam_search
from zoo.export import ServingModule, export_saved_model


def test_every_beam_signature_stops_as_exported(parts, tmp_path):
    model, source_tokenizer, target_tokenizer = parts
    path = export_saved_model(*parts, str(tmp_path), beam_width=BEAM_WIDTH, length_penalty=LENGTH_PENALTY,
                              max_source_length=MAX_SOURCE_LENGTH, beam_stopping="approximate")
    with open(os.path.join(path, constants.ASSETS_EXTRA_DIR, constants.SETTINGS_FILE), encoding="utf-8") as f:
        assert json.load(f)["beam_stopping"] == "approximate"
    loaded = tf.saved_model.load(path)
    ids = reference_ids(source_tokenizer, TEST_SOURCES)
    source = tf.constant(TEST_SOURCES)

    default = loaded.signatures["serving_default"](source=source)
    ref = beam_search(model, ids, beam_width=BEAM_WIDTH, length_penalty=LENGTH_PENALTY, stopping="approximate")
    assert as_str(default["translation"]) == [hyps[0] for hyps in decode_all(target_tokenizer, ref.ids)]
    np.testing.assert_allclose(default["score"].numpy(), ref.scores[:, 0].numpy(), rtol=1e-5, atol=1e-5)

    beam = loaded.signatures["beam_search"](source=source, beam_width=tf.constant(4), num_hypotheses=tf.constant(2),
                                            length_penalty=tf.constant(1.5))
    ref = beam_search(model, ids, beam_width=4, num_hypotheses=2, length_penalty=1.5, stopping="approximate")
    assert [as_str(row) for row in beam["translations"].numpy()] == decode_all(target_tokenizer, ref.ids)
    np.testing.assert_allclose(beam["scores"].numpy(), ref.scores.numpy(), rtol=1e-5, atol=1e-5)


def test_a_bad_rule_is_refused(parts):
    with pytest.raises(ValueError, match=r"beam_stopping must be one of \['exact', 'approximate'\], received 'soon'"):
        ServingModule(*parts, beam_stopping="soon")
    assert ServingModule(*parts).settings()["beam_stopping"] == "exact"
