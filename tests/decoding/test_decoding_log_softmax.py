"""The log-probabilities a search reads, normalized without the whole log-softmax."""

import numpy as np
import pytest
import tensorflow as tf

from zoo.decoding.log_softmax import log_normalizer, top_k_log_probs


def logits_with_holes(shape, seed, scale=8.0):
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=shape).astype(np.float32) * scale
    logits[rng.random(shape) < 0.3] = -np.inf  # tokens a shortlist forbids
    logits[..., 3] = 90.0  # one dominant token: others underflow exp(x - max) in float32
    logits[0, ..., 3] = 1.0
    return logits


@pytest.mark.parametrize("vocab", [50, 1000, 8000])
def test_the_normalizer_is_logsumexp(vocab):
    logits = logits_with_holes((3, 4, vocab), seed=vocab)
    expected = tf.reduce_logsumexp(tf.constant(logits, tf.float64), axis=-1, keepdims=True)
    np.testing.assert_allclose(log_normalizer(tf.constant(logits)).numpy(), expected.numpy(), rtol=1e-6, atol=1e-5)


@pytest.mark.parametrize("vocab,k", [(50, 8), (1000, 8), (8000, 13)])
def test_top_k_log_probs_are_those_of_the_log_softmax(vocab, k):
    logits = logits_with_holes((3, 4, vocab), seed=vocab + k)
    logits[1, 2, 10:20] = logits[1, 2, 3]  # ties: the lower column first, as tf.math.top_k
    log_probs, columns = top_k_log_probs(tf.constant(logits), k)
    expected_values, expected_columns = tf.math.top_k(tf.nn.log_softmax(tf.constant(logits, tf.float64)), k)
    np.testing.assert_array_equal(columns.numpy(), expected_columns.numpy())
    np.testing.assert_allclose(log_probs.numpy(), expected_values.numpy(), rtol=1e-6, atol=1e-5)


def test_the_same_under_xla():
    logits = tf.constant(logits_with_holes((2, 5, 700), seed=1))
    compiled = tf.function(lambda x: (log_normalizer(x), *top_k_log_probs(x, 8)), jit_compile=True)
    for got, expected in zip(compiled(logits), (log_normalizer(logits), *top_k_log_probs(logits, 8))):
        np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-6, atol=1e-5)
