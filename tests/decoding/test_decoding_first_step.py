"""Beam search's first step runs the model on one row per sentence (`DecodingStrategy.first_view`)."""

import dataclasses

import numpy as np
import pytest
import tensorflow as tf
from decoding_toy_model import StepRecorder, ToyModel

from zoo.decoding import BeamSearch, Greedy, decode

SOURCE = np.array([[4, 5, 1, 4, 3], [5, 4, 0, 0, 0], [1, 1, 5, 4, 4]], np.int32)


@dataclasses.dataclass(frozen=True, eq=False)
class EveryRow(BeamSearch):
    """Beam search whose first step runs the model on all K rows (no `first_view`)."""

    def first_view(self, search):
        return None


def test_the_first_step_runs_the_model_on_one_row_per_sentence():
    model = StepRecorder(ToyModel(seed=5, end_bias=-1e4))  # no end token: every step runs
    decode(model, SOURCE, BeamSearch(4), max_length=4, compact=False)
    assert model.shapes == [(3, 1), (3, 4), (3, 4), (3, 4)]
    model.shapes.clear()
    decode(model, SOURCE, EveryRow(4), max_length=4, compact=False)
    assert model.shapes == [(3, 4)] * 4
    model.shapes.clear()
    decode(model, SOURCE, Greedy(), max_length=4, compact=False)  # one hypothesis: nothing changes
    assert model.shapes == [(3, 1)] * 4


@pytest.mark.parametrize("mode", ["eager", "graph"])
@pytest.mark.parametrize(
    "width, coverage, alignments",
    [(2, 0.0, True), (5, 0.2, True), (5, 0.0, False), (40, 0.0, True)],  # 40: more than a row's 2K columns
)
def test_the_same_results_as_running_every_row(mode, width, coverage, alignments):
    model = ToyModel(seed=5, end_bias=-1.0)

    def search(cls, source, beam):
        return decode(model, source, cls(beam, num_hypotheses=2, coverage_penalty=coverage, alignments=alignments),
                      max_length=6)

    if mode == "graph":  # the width a run-time tensor, as in the exports' beam_search signature
        signature = [tf.TensorSpec([None, None], tf.int32), tf.TensorSpec([], tf.int32)]
        one_row = tf.function(lambda s, k: search(BeamSearch, s, k), input_signature=signature)
        every_row = tf.function(lambda s, k: search(EveryRow, s, k), input_signature=signature)
        got, expected = one_row(SOURCE, width), every_row(SOURCE, width)
    else:
        got, expected = search(BeamSearch, SOURCE, width), search(EveryRow, SOURCE, width)
    np.testing.assert_array_equal(got.ids.numpy(), expected.ids.numpy())
    np.testing.assert_array_equal(got.lengths.numpy(), expected.lengths.numpy())
    np.testing.assert_allclose(got.scores.numpy(), expected.scores.numpy(), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(got.log_probs.numpy(), expected.log_probs.numpy(), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(got.attention.numpy(), expected.attention.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("mode", ["eager", "graph"])
def test_an_empty_batch_runs_no_step(mode):
    model = StepRecorder(ToyModel(seed=5))
    empty = np.zeros([0, 3], np.int32)
    if mode == "graph":
        search = tf.function(lambda s: decode(model.model, s, BeamSearch(3, num_hypotheses=2)),
                             input_signature=[tf.TensorSpec([None, None], tf.int32)])
        result = search(empty)
    else:
        result = decode(model, empty, BeamSearch(3, num_hypotheses=2))
        assert model.shapes == []
    assert result.ids.shape[:2] == (0, 2) and result.scores.shape == (0, 2)
