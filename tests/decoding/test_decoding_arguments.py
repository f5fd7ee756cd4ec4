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
    # lp(t) ** 100 overflowed float32 (every score -0.0: tied), lp(t) ** -100 underflowed (scores -inf)
    (lambda: BeamSearch(3, length_penalty=100.0), ValueError, r"length_penalty must be between -10.0 and 10.0"),
    (lambda: BeamSearch(3, length_penalty=-10.5), ValueError, r"length_penalty must be between -10.0 and 10.0"),
    (lambda: Greedy(length_penalty=np.float32(40)), ValueError, r"length_penalty must be between -10.0 and 10.0"),
    (lambda: Sampling(temperature="x"), TypeError, "temperature must be a number"),
    (lambda: Sampling(temperature=float("nan")), ValueError, "temperature must not be NaN"),
    (lambda: Sampling(top_k=2.5), TypeError, "top_k must be an integer"),
    (lambda: Sampling(seed=1.5), TypeError, "seed must be an integer"),
    (lambda: BeamSearch(3, length_penalty=float("inf")), ValueError, "length_penalty must be finite"),
    (lambda: Greedy(length_penalty=float("-inf")), ValueError, "length_penalty must be finite"),
    (lambda: BeamSearch(3, coverage_penalty=float("inf")), ValueError, "coverage_penalty must be finite"),
    (lambda: BeamSearch(3, length_penalty=tf.constant([0.0, 1.0])), ValueError,
     r"length_penalty must be a scalar, received shape \(2,\)"),
    (lambda: Greedy(coverage_penalty=np.array([0.2, 0.2])), ValueError, "coverage_penalty must be a scalar"),
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


def test_integers_past_int32_are_refused_not_wrapped(model):
    # Each was cut to int32 first: id 2**32 + 4 decoded as id 4, max_length 2**32 + 1 capped every
    # translation at 1 token, a width of 2**31 failed deep in TensorFlow without naming beam_width.
    with pytest.raises(ValueError, match=r"source_ids must be token ids in \[0, 10\), received 4294967300"):
        decode(model, np.array([[2**32 + 4, 5, 6]], np.int64), Greedy())
    with pytest.raises(ValueError, match=r"target_ids must be token ids in \[0, 6\), received 4294967300"):
        sequence_log_prob(model, SOURCE[:1], np.array([[2**32 + 4]], np.int64))
    with pytest.raises(ValueError, match="max_length must be at most 2147483647 .* received 4294967297"):
        decode(model, SOURCE, Greedy(), max_length=2**32 + 1)
    with pytest.raises(ValueError, match="beam_width must be at most 2147483647 .* received 2147483648"):
        decode(model, SOURCE, BeamSearch(2**31))
    search = tf.function(lambda ids, cap: decode(model, ids, Greedy(), max_length=cap).ids,
                         input_signature=[tf.TensorSpec([None, None], tf.int64), tf.TensorSpec([], tf.int64)])
    assert search(SOURCE.astype(np.int64), 5).shape[0] == 2
    with pytest.raises(tf.errors.InvalidArgumentError, match="max_length must be at most 2147483647"):
        search(SOURCE.astype(np.int64), 2**32 + 1)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"source_ids must be token ids in \[0, 10\)"):
        search(np.array([[2**32 + 4, 5, 6]], np.int64), 5)


def test_a_top_k_past_int32_keeps_the_whole_vocabulary(model):
    whole = decode(model, SOURCE, Sampling(top_k=10**6, seed=5)).ids.numpy()  # it was top_k=1 (2**32 + 1 wrapped)
    np.testing.assert_array_equal(decode(model, SOURCE, Sampling(top_k=2**32 + 1, seed=5)).ids.numpy(), whole)
    np.testing.assert_array_equal(decode(model, SOURCE, Sampling(top_k=np.int64(2**40), seed=5)).ids.numpy(), whole)


@pytest.mark.parametrize("make, name", [
    (lambda: Sampling(temperature=1e39, seed=1), "temperature"),
    (lambda: BeamSearch(3, coverage_penalty=1e39), "coverage_penalty"),
])
def test_floats_past_float32_are_refused_by_name(make, name):
    with pytest.raises(ValueError, match=rf"{name} must fit float32 \(at most 3.402823e\+38 in magnitude\)"):
        make()


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


@pytest.mark.parametrize("make, words", [
    (lambda value: BeamSearch(3, length_penalty=value), "length_penalty must be between -10.0 and 10.0"),
    (lambda value: Greedy(length_penalty=value), "length_penalty must be between -10.0 and 10.0"),
    (lambda value: Sampling(temperature=value, seed=1), "temperature must be a number, not NaN"),
])
def test_run_time_nan_parameters_fail_instead_of_decoding(model, make, words):
    search = tf.function(lambda ids, value: decode(model, ids, make(value)).ids)
    assert search(SOURCE, tf.constant(0.5)).shape[0] == 2
    with pytest.raises(tf.errors.InvalidArgumentError, match=words):
        search(SOURCE, tf.constant(float("nan")))


@pytest.mark.parametrize("value", [100.0, -10.5])
def test_run_time_length_penalties_past_the_bound_fail_instead_of_tying(model, value):
    search = tf.function(lambda ids, alpha: decode(model, ids, BeamSearch(3, length_penalty=alpha)).scores)
    assert np.all(search(SOURCE, tf.constant(-10.0)).numpy() < 0)  # the bounds themselves decode
    with pytest.raises(tf.errors.InvalidArgumentError, match="length_penalty must be between -10.0 and 10.0"):
        search(SOURCE, tf.constant(value))


@pytest.mark.parametrize("name", ["temperature", "top_k", "seed"])
def test_per_sentence_sampling_parameters_must_match_the_batch(model, name):
    values = {"temperature": tf.constant([1.0, 0.5, 1.0]), "top_k": tf.constant([0, 2, 3]), "seed": tf.constant([1, 2, 3])}
    arguments = {"seed": 1, name: values[name]}
    with pytest.raises(ValueError, match=rf"{name} must be a scalar or one value per sentence \(2\), received 3"):
        decode(model, SOURCE, Sampling(**arguments))
    arguments[name] = values[name][:2]  # one per sentence: fine
    assert decode(model, SOURCE, Sampling(**arguments)).ids.shape[0] == 2
    search = tf.function(lambda ids, value: decode(model, ids, Sampling(**{**arguments, name: value})).ids,
                         input_signature=[tf.TensorSpec([None, None], tf.int32), tf.TensorSpec([None], values[name].dtype)])
    with pytest.raises(tf.errors.InvalidArgumentError, match=f"{name} must be a scalar or one value per sentence"):
        search(SOURCE, values[name])


def test_scored_batches_must_match(model):
    with pytest.raises(ValueError, match=r"source_ids and target_ids must have as many sentences.*\(2, 3\) and \(1, 2\)"):
        sequence_log_prob(model, SOURCE, [[4, 5]])
    score = tf.function(lambda s, t: sequence_log_prob(model, s, t),
                        input_signature=[tf.TensorSpec([None, None], tf.int32)] * 2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="source_ids and target_ids must have as many sentences"):
        score(SOURCE, np.array([[4, 5]], np.int32))


def test_a_scored_target_is_read_up_to_its_first_padding(model):
    one = sequence_log_prob(model, SOURCE[:1], [[4]]).numpy()
    np.testing.assert_allclose(sequence_log_prob(model, SOURCE[:1], [[4, 0, 5]]).numpy(), one, rtol=1e-6)
    np.testing.assert_allclose(sequence_log_prob(model, SOURCE[:1], [[4, 0, 3]]).numpy(), one, rtol=1e-6)  # 3: EOS
    # Empty translations, (B, 0): log p(end token), as an all-padding target gives.
    np.testing.assert_allclose(sequence_log_prob(model, SOURCE, np.zeros((2, 0), np.int32)).numpy(),
                               sequence_log_prob(model, SOURCE, np.zeros((2, 1), np.int32)).numpy(), rtol=1e-6)


def test_shortlists_are_checked_against_the_model(model):
    from zoo.data.shortlist import ShortlistTable
    from zoo.decoding import Shortlist

    def table(source_vocab, target_vocab):
        rows = np.full((source_vocab, 2), 3, np.int32)
        rows[:, 0] = np.arange(source_vocab) % target_vocab
        return Shortlist(ShortlistTable(rows=rows, always=np.arange(4), target_vocab_size=target_vocab, frequent=0))

    with pytest.raises(TypeError, match="shortlist must be None or a zoo.decoding.Shortlist, received 'x'"):
        decode(model, SOURCE, Greedy(), shortlist="x")
    with pytest.raises(TypeError, match="Shortlist needs a zoo.data.ShortlistTable"):
        Shortlist("x")
    for source_vocab, target_vocab, side in ((10, 5, "target vocabulary of 5 ids, the model 6"),
                                             (10, 8, "target vocabulary of 8 ids, the model 6"),
                                             (6, 6, "source vocabulary of 6 ids, the model 10")):
        with pytest.raises(ValueError, match=f"shortlist: its table has a {side}"):
            decode(model, SOURCE, Greedy(), shortlist=table(source_vocab, target_vocab))
        with pytest.raises(ValueError, match=f"shortlist: its table has a {side}"):
            sequence_log_prob(model, SOURCE, [[4], [5]], shortlist=table(source_vocab, target_vocab))
    assert decode(model, SOURCE, Greedy(), shortlist=table(10, 6)).ids.shape[0] == 2
