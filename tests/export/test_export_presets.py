"""Exports beyond the tiny Bahdanau model of test_export.py: a Luong model (with and without tied
embeddings), an rnnenc model and a
model trained in mixed bfloat16 each reproduce their Keras model's decoding (the checks of
`assert_export_matches_keras`) and serve float32."""

import pytest
import tensorflow as tf

from export_test_model import (BEAM_WIDTH, LENGTH_PENALTY, MAX_SOURCE_LENGTH, SOURCE_TEXTS, TARGET_TEXTS,
                               TEST_SOURCES, assert_export_matches_keras, tiny_model)
from zoo.data import CharTokenizer
from zoo.export import export_saved_model

SIZES = {"embedding_dim": 8, "encoder_units": 8, "decoder_units": 16, "dropout": 0.0}
CASES = {  # preset, dtype policy, sizes
    "luong_general": ("luong_general", "float32", SIZES),
    "luong_general_tied_embeddings": ("luong_general", "float32", {**SIZES, "tie_embeddings": True}),
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
                              length_penalty=LENGTH_PENALTY, max_source_length=MAX_SOURCE_LENGTH)
    loaded = tf.saved_model.load(path)
    parts = (model, source_tokenizer, target_tokenizer)
    # bfloat16: 2e-2, plus 2^-6 nats a token (a rounding of 2^-8 relative on logits of magnitude up to 4): on a
    # CPU with native bfloat16 products the export's fused kernels round other sums than the Keras model's do.
    bfloat16 = dtype == "mixed_bfloat16"
    expected = assert_export_matches_keras(loaded, parts, TEST_SOURCES, 2e-2 if bfloat16 else 1e-5,
                                           per_token=2.0**-6 if bfloat16 else 0.0)
    assert len(set(expected)) >= 3, f"the {case} test model should translate differently: {expected}"
