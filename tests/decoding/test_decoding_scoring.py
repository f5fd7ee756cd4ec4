"""sequence_log_prob: teacher-forced scores equal what the searches report."""

import numpy as np
import tensorflow as tf
from decoding_toy_model import MarkovModel, ToyModel

from zoo.data.vocabulary import EOS_ID
from zoo.decoding import beam_search, greedy_search, sequence_log_prob


def padded(sentences):
    width = max(len(s) for s in sentences)
    return np.array([s + [0] * (width - len(s)) for s in sentences], np.int32)


def test_teacher_forced_log_prob_by_hand():
    model = MarkovModel({2: {4: 0.5, 5: 0.3}, 4: {5: 0.7, EOS_ID: 0.2}, 5: {EOS_ID: 0.9}})
    source = padded([[4, 4], [5], [4]])
    targets = padded([[4, 5], [5], [4, 5, EOS_ID]])
    expected = [
        np.log(0.5 * 0.7 * 0.9),  # the end token is appended
        np.log(0.3 * 0.9),
        np.log(0.5 * 0.7 * 0.9),  # an end token already there is not doubled
    ]
    np.testing.assert_allclose(sequence_log_prob(model, source, targets), expected, rtol=1e-5)
    without_end = sequence_log_prob(model, source, targets, append_end=False)
    np.testing.assert_allclose(without_end, [np.log(0.35), np.log(0.3), np.log(0.5 * 0.7 * 0.9)], rtol=1e-5)
    # Tokens after the first end token do not count.
    after_end = sequence_log_prob(model, source[:1], [[4, EOS_ID, 5, 5]])
    np.testing.assert_allclose(after_end, [np.log(0.5 * 0.2)], rtol=1e-5)


def test_beam_and_greedy_log_probs_equal_the_teacher_forced_ones():
    model = ToyModel(seed=3, end_bias=-1.5)
    source = padded([[4, 5, 1, 4], [5], [1, 1, 5, 4, 4, 5, 4]])
    result = beam_search(model, source, beam_width=4, num_hypotheses=4, length_penalty=0.6, max_length=9)
    for n in range(4):
        ids = result.ids[:, n]
        has_end = tf.reduce_any(tf.equal(ids, EOS_ID), axis=1).numpy()
        scored = sequence_log_prob(model, source, ids, append_end=False)
        np.testing.assert_allclose(scored, result.log_probs[:, n], rtol=1e-5)
        # Cut hypotheses (no end token) score differently when the end token is appended.
        appended = sequence_log_prob(model, source, ids).numpy()
        np.testing.assert_allclose(appended[has_end], result.log_probs.numpy()[has_end, n], rtol=1e-5)
        assert np.all(appended[~has_end] < result.log_probs.numpy()[~has_end, n])
    greedy = greedy_search(model, source)
    np.testing.assert_allclose(sequence_log_prob(model, source, greedy.ids[:, 0]), greedy.log_probs[:, 0], rtol=1e-5)


def test_sequence_log_prob_compiles():
    model = ToyModel(seed=0)
    source, target = padded([[4, 5], [5]]), padded([[4, 4, 5], [1]])
    compiled = tf.function(lambda s, t: sequence_log_prob(model, s, t), jit_compile=True)
    np.testing.assert_allclose(compiled(source, target), sequence_log_prob(model, source, target), rtol=1e-5)
