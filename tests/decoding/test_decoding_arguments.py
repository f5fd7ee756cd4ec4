"""Bad arguments to the decoding API get an error that names them, never a silent wrong result."""

import numpy as np
import pytest
import tensorflow as tf

import zoo.models
from zoo.decoding import BeamSearch, Greedy, Sampling, decode, sequence_log_prob

SOURCE = np.array([[4, 5, 6], [7, 8, 0]], np.int32)


@pytest.fixture(scope="module")
def model():
    return zoo.models.build("luong_general", 10, 6, embedding_dim=8, encoder_units=8, decoder_units=16)


@pytest.mark.parametrize("ids, error, words", [
    ([[4, -1, 6]], ValueError, r"source_ids must be token ids in \[0, 10\), received -1"),  # not id 9 from the end
    ([[4, 10, 6]], ValueError, r"source_ids must be token ids in \[0, 10\), received 10"),
    (np.array([[4.9, 5.2, 6.7]], np.float32), TypeError, "source_ids must hold integer token ids, received dtype float32"),
    (np.array([4, 5, 6]), ValueError, r"source_ids must have shape \(batch, length\), received shape \(3,\)"),
    (np.zeros((2, 0), np.int32), ValueError, r"at least one position per sentence, received shape \(2, 0\)"),
    ("bonjour", TypeError, "source_ids must hold integer token ids"),
])
def test_bad_source_ids_name_what_is_wrong(model, ids, error, words):
    with pytest.raises(error, match=words):
        decode(model, ids, Greedy())


def test_ids_out_of_range_fail_in_a_graph_too(model):
    search = tf.function(lambda ids: decode(model, ids, Greedy()).ids,
                         input_signature=[tf.TensorSpec([None, None], tf.int32)])
    assert search(SOURCE).shape[0] == 2
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"source_ids must be token ids in \[0, 10\)"):
        search(np.array([[4, -1, 6]], np.int32))


def test_scored_targets_are_checked(model):
    with pytest.raises(ValueError, match=r"target_ids must be token ids in \[0, 6\), received 6"):
        sequence_log_prob(model, SOURCE, [[4, 6], [5, 4]])
    with pytest.raises(ValueError, match=r"source_ids must be token ids in \[0, 10\), received -3"):
        sequence_log_prob(model, [[4, -3]], [[4]])


@pytest.mark.parametrize("make, error, words", [
    (lambda: BeamSearch(2.9), TypeError, "beam_width must be an integer"),  # not cut to 2
    (lambda: BeamSearch(True), TypeError, "beam_width must be an integer"),
    (lambda: BeamSearch("3"), TypeError, "beam_width must be an integer"),
    (lambda: BeamSearch(None), TypeError, "beam_width must be an integer"),
    (lambda: BeamSearch(3, num_hypotheses=2.5), TypeError, "num_hypotheses must be an integer"),
    (lambda: BeamSearch(3, length_penalty="x"), TypeError, "length_penalty must be a number"),
    (lambda: BeamSearch(3, length_penalty=float("nan")), ValueError, "length_penalty must not be NaN"),
    (lambda: Greedy(length_penalty="x"), TypeError, "length_penalty must be a number"),
    (lambda: Greedy(coverage_penalty=-1.0), ValueError, "coverage_penalty must be >= 0"),  # as for BeamSearch
    (lambda: Sampling(temperature="x"), TypeError, "temperature must be a number"),
    (lambda: Sampling(temperature=float("nan")), ValueError, "temperature must not be NaN"),
    (lambda: Sampling(top_k=2.5), TypeError, "top_k must be an integer"),
    (lambda: Sampling(seed=1.5), TypeError, "seed must be an integer"),
])
def test_bad_strategy_arguments_name_what_is_wrong(make, error, words):
    with pytest.raises(error, match=words):
        make()


def test_max_length_must_be_an_integer(model):
    with pytest.raises(TypeError, match="max_length must be an integer"):
        decode(model, SOURCE, Greedy(), max_length=2.5)


def test_numpy_integers_are_integers(model):
    expected = decode(model, SOURCE, BeamSearch(2, num_hypotheses=2), max_length=7)
    result = decode(model, SOURCE, BeamSearch(np.int64(2), num_hypotheses=np.int32(2)), max_length=np.int64(7))
    np.testing.assert_array_equal(result.ids.numpy(), expected.ids.numpy())
    sampled = decode(model, SOURCE, Sampling(top_k=np.int32(2), seed=np.int64(3), temperature=np.float32(0.5)))
    assert sampled.ids.shape[0] == 2


def test_run_time_widths_are_checked(model):
    search = tf.function(lambda ids, k, n: decode(model, ids, BeamSearch(k, num_hypotheses=n)).ids,
                         input_signature=[tf.TensorSpec([None, None], tf.int32), tf.TensorSpec([], tf.int32),
                                          tf.TensorSpec([], tf.int32)])
    assert search(SOURCE, 3, 2).shape[:2] == (2, 2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="beam_width must be >= 1"):
        search(SOURCE, 0, 1)
    with pytest.raises(tf.errors.InvalidArgumentError, match="num_hypotheses must be >= 1"):
        search(SOURCE, 2, -1)
    limited = tf.function(lambda ids, cap: decode(model, ids, Greedy(), max_length=cap).ids,
                          input_signature=[tf.TensorSpec([None, None], tf.int32), tf.TensorSpec([], tf.int32)])
    with pytest.raises(tf.errors.InvalidArgumentError, match="max_length must be >= 1"):
        limited(SOURCE, 0)


@pytest.mark.parametrize("name", zoo.models.presets())
def test_an_empty_batch_decodes_and_scores_eagerly(name):
    # Eagerly the shapes are all known: a (0, S) batch once reshaped (S, 0) to (1, 0) in the
    # encoder's input projection, and Keras' eager max refused the empty maxout input.
    model = zoo.models.build(name, 10, 6, embedding_dim=8, encoder_units=8, decoder_units=16)
    empty = np.zeros([0, 5], np.int32)
    assert tuple(model((empty, np.zeros([0, 3], np.int32))).shape) == (0, 3, 6)
    for strategy in (Greedy(), BeamSearch(3, num_hypotheses=2), Sampling(seed=1)):
        assert decode(model, empty, strategy).ids.shape[0] == 0
    assert sequence_log_prob(model, empty, np.zeros([0, 3], np.int32)).shape == (0,)
