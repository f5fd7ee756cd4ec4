"""benchmarks/decode_flops.py: a decoding run's product FLOPs against `forward_flops`, and its counts of rows."""

import os
import sys

import numpy as np
import pytest

import zoo.models
from zoo.decoding import Greedy, Shortlist, decode
from zoo.models.flops import forward_flops

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                "benchmarks"))
from decode_flops import CountingModel, bilinear, matmul_flops  # noqa: E402

E, U, D, V = 4, 3, 5, 11


def tiny(preset, **overrides):
    return zoo.models.build(preset, 9, V, embedding_dim=E, encoder_units=U, decoder_units=D, dropout=0.0,
                            **overrides)


@pytest.mark.parametrize("preset, overrides", [
    ("luong_general", {"decoder_layers": 2}), ("luong_concat", {}), ("luong_general", {"tie_embeddings": True}),
    ("bahdanau", {}), ("rnnenc", {})])
def test_a_decoded_sentence_costs_its_forward_pass(preset, overrides):
    # One sentence of S source tokens decoded greedily for T steps computes the teacher-forced forward pass of a
    # pair of S and T tokens: every term, encoder and bridge once, the decoder's terms T times.
    config = tiny(preset, **overrides).get_config()
    source, steps = 7, 4
    counts = {"encoded_positions": source, "sentences": 1, "row_steps": steps, "row_columns": steps * V,
              "row_sources": steps * source}
    assert matmul_flops(config, counts) == pytest.approx(sum(forward_flops(config, source, steps).values()))
    # Three sentences, beam 2 over 5 steps (one row each at the first, two after): the sum of its rows' costs.
    terms = forward_flops(config, source, 1)
    per_row = sum(terms.values()) - sum(forward_flops(config, source, 0).values())
    per_sentence = sum(forward_flops(config, source, 0).values())
    rows = 3 * (1 + 2 * 4)
    beam = {"encoded_positions": 3 * source, "sentences": 3, "row_steps": rows, "row_columns": rows * V,
            "row_sources": rows * source}
    assert matmul_flops(config, beam) == pytest.approx(3 * per_sentence + rows * per_row)
    # Over a shortlist of M columns the output projection costs M / V of the vocabulary's.
    shortlist = dict(counts, row_columns=steps * 6)
    expected = sum(forward_flops(config, source, steps).values()) - steps * terms["output_projection"] * (1 - 6 / V)
    assert matmul_flops(config, shortlist) == pytest.approx(expected)


def test_the_terms_are_bilinear_in_the_lengths():
    config = tiny("luong_general").get_config()
    for term, (a, b, c, d) in bilinear(config).items():
        for source, target in ((3, 8), (12, 5)):
            assert a * source + b * target + c * source * target + d == forward_flops(config, source, target)[term]


def test_the_counting_model_counts_the_rows_each_step_computed():
    model = tiny("luong_general")
    counting = CountingModel(model)
    source_ids = np.array([[5, 6, 7, 0], [8, 4, 0, 0], [4, 4, 4, 4]], np.int32)
    result = decode(counting, source_ids, Greedy(), max_length=6, compact=False)
    counts = counting.read()
    steps = int(result.lengths.numpy().max())  # without compaction every row runs until the last one ends
    assert counts == {"encoded_positions": 12, "sentences": 3, "row_steps": 3 * steps, "row_columns": 3 * steps * V,
                      "row_sources": 3 * steps * 4}
    # The same translations as the model's own; reset starts again from zero.
    np.testing.assert_array_equal(result.ids, decode(model, source_ids, Greedy(), max_length=6, compact=False).ids)
    counting.reset()
    assert set(counting.read().values()) == {0}


def test_the_counting_model_passes_the_shortlist_through():
    from zoo.data import ShortlistTable

    model = zoo.models.build("luong_general", 9, 200, embedding_dim=E, encoder_units=U, decoder_units=D, dropout=0.0)
    counting = CountingModel(model)
    rows = np.tile(np.array([[5, 6, 7]], np.int32), [9, 1])
    table = ShortlistTable(rows, np.arange(5, dtype=np.int32), 200, 1)  # the reserved ids and one frequent one
    result = decode(counting, np.array([[5, 6, 0]], np.int32), Greedy(), max_length=3, shortlist=Shortlist(table),
                    compact=False)
    counts = counting.read()
    assert counts["row_steps"] == int(result.lengths.numpy().max())
    assert counts["row_columns"] == counts["row_steps"] * 64  # 8 ids, scored in one block of 64 columns
