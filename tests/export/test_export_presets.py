"""Exports beyond the tiny Bahdanau model of test_export.py: a Luong model, an rnnenc model and a
model trained in mixed bfloat16 each reproduce their Keras model's decoding and serve float32."""

import numpy as np
import pytest
import tensorflow as tf

from export_test_model import (BEAM_WIDTH, LENGTH_PENALTY, SOURCE_TEXTS, TARGET_TEXTS, TEST_SOURCES, as_str,
                               tiny_model)
from zoo.data import CharTokenizer
from zoo.decoding import beam_search, greedy_search
from zoo.export import export_saved_model

SIZES = {"embedding_dim": 8, "encoder_units": 8, "decoder_units": 16, "dropout": 0.0}
CASES = {  # preset, dtype policy, sizes
    "luong_general": ("luong_general", "float32", SIZES),
    "rnnenc": ("rnnenc", "float32", {**SIZES, "output_units": 8}),
    "bahdanau_mixed_bfloat16": ("bahdanau", "mixed_bfloat16", {**SIZES, "attention_units": 8, "output_units": 8}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_export_reproduces_the_keras_decoding(case, tmp_path):
    preset, dtype, sizes = CASES[case]
    source_tokenizer, target_tokenizer = CharTokenizer.build(SOURCE_TEXTS), CharTokenizer.build(TARGET_TEXTS)
    model = tiny_model(source_tokenizer, target_tokenizer, epochs=40, preset=preset, dtype=dtype, sizes=sizes)
    assert model.dtype_policy.name == dtype
    path = export_saved_model(model, source_tokenizer, target_tokenizer, str(tmp_path), beam_width=BEAM_WIDTH,
                              length_penalty=LENGTH_PENALTY, max_source_length=24)
    loaded = tf.saved_model.load(path)
    ids = source_tokenizer.encode(tf.constant(TEST_SOURCES)).to_tensor()
    source = tf.constant(TEST_SOURCES)
    tolerance = 2e-2 if dtype == "mixed_bfloat16" else 1e-5

    greedy = loaded.signatures["greedy"](source=source)
    reference = greedy_search(model, ids, length_penalty=LENGTH_PENALTY)
    expected = as_str(target_tokenizer.decode(reference.ids[:, 0]))
    assert as_str(greedy["translation"]) == expected
    assert len(set(expected)) >= 3, f"the {case} test model should translate differently: {expected}"
    assert greedy["score"].dtype == tf.float32
    np.testing.assert_allclose(greedy["score"].numpy(), reference.scores[:, 0].numpy(), rtol=tolerance,
                               atol=tolerance)

    beam = loaded.signatures["beam_search"](source=source, beam_width=tf.constant(3),
                                            num_hypotheses=tf.constant(2), length_penalty=tf.constant(0.8))
    reference = beam_search(model, ids, beam_width=3, num_hypotheses=2, length_penalty=0.8)
    for row, hypotheses in zip(beam["translations"].numpy(), reference.ids):
        assert as_str(row) == as_str(target_tokenizer.decode(hypotheses))
    assert beam["scores"].dtype == tf.float32 and beam["attention"].dtype == tf.float32
    np.testing.assert_allclose(beam["scores"].numpy(), reference.scores.numpy(), rtol=tolerance, atol=tolerance)
