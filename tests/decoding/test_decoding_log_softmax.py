"""The log-probabilities a search reads, normalized without the whole log-softmax."""

import numpy as np
import pytest
import tensorflow as tf

from zoo.decoding.log_softmax import log_normalizer, log_normalizer_at


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


def test_the_same_under_xla():
    logits = tf.constant(logits_with_holes((2, 5, 700), seed=1))
    compiled = tf.function(log_normalizer, jit_compile=True)
    np.testing.assert_allclose(compiled(logits).numpy(), log_normalizer(logits).numpy(), rtol=1e-6, atol=1e-5)


@pytest.mark.parametrize("vocab", [50, 8000])
def test_the_normalizer_read_at_the_maximum_is_that_of_the_rows(vocab):
    logits = logits_with_holes((3, 4, vocab), seed=vocab + 1)
    logits[1, 2, [7, 9]] = 95.0  # a tie: either column of the maximum gives it
    column = np.argmax(logits, axis=-1).astype(np.int32)
    assert column[1, 2] == 7
    normalizer = log_normalizer_at(tf.constant(logits), tf.constant(column))
    np.testing.assert_array_equal(normalizer.numpy(), log_normalizer(tf.constant(logits)).numpy())
    column[1, 2] = 9
    other = log_normalizer_at(tf.constant(logits), tf.constant(column))
    np.testing.assert_array_equal(other.numpy(), normalizer.numpy())
    compiled = tf.function(log_normalizer_at, jit_compile=True)(tf.constant(logits), tf.constant(column))
    np.testing.assert_allclose(compiled.numpy(), normalizer.numpy(), rtol=1e-6, atol=1e-5)
