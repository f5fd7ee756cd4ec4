"""The recipe's loss and initialization options, against their equations."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from recipes import load_config
from zoo.training import build_model, compile_model
from zoo.training.loss import TokenCrossEntropy
from zoo.config_checks import config_problems

RNG = np.random.default_rng(0)
LOGITS = RNG.normal(size=(3, 4, 6)).astype("float32")
TARGETS = np.array([[2, 3, 1, 0], [4, 0, 0, 0], [5, 5, 2, 1]], "int32")  # 0 = padding


def _log_softmax(x):
    return x - x.max(-1, keepdims=True) - np.log(np.exp(x - x.max(-1, keepdims=True)).sum(-1, keepdims=True))


def _summed(loss):
    return float(keras.ops.convert_to_numpy(loss(TARGETS, LOGITS)))


def test_token_and_sentence_normalization():
    log_p = _log_softmax(LOGITS)
    nll = -np.take_along_axis(log_p, TARGETS[..., None], -1)[..., 0] * (TARGETS != 0)
    assert _summed(TokenCrossEntropy()) == pytest.approx(nll.sum() / 8, rel=1e-5)  # 8 real tokens
    assert _summed(TokenCrossEntropy(normalization="sentences")) == pytest.approx(nll.sum() / 3, rel=1e-5)


def test_label_smoothing_spreads_epsilon_over_the_vocabulary():
    epsilon, log_p = 0.1, _log_softmax(LOGITS)
    smoothed = np.full(LOGITS.shape, epsilon / 6) + (1 - epsilon) * np.eye(6)[TARGETS]
    per_token = -(smoothed * log_p).sum(-1) * (TARGETS != 0)
    assert _summed(TokenCrossEntropy(label_smoothing=epsilon)) == pytest.approx(per_token.sum() / 8, rel=1e-5)


def test_loss_options_survive_serialization_and_refuse_bad_values():
    loss = TokenCrossEntropy(normalization="sentences", label_smoothing=0.2)
    again = TokenCrossEntropy.from_config(loss.get_config())
    assert (again.normalization, again.label_smoothing) == ("sentences", 0.2)
    with pytest.raises(ValueError, match="'tokens' or 'sentences'"):
        TokenCrossEntropy(normalization="batch")
    with pytest.raises(ValueError, match="label_smoothing"):
        TokenCrossEntropy(label_smoothing=1.0)


def _tiny(**fields):
    config = load_config("dates_luong_general")
    config.update(embedding_dim=8, encoder_units=8, decoder_units=16, attention_units=8, output_units=8, **fields)
    return config


def test_init_scale_starts_every_weight_uniform_within_it():
    model = build_model(_tiny(init_scale=0.1), 12, 12)
    values = np.concatenate([np.ravel(keras.ops.convert_to_numpy(w)) for w in model.weights])
    assert np.abs(values).max() <= 0.1 and values.std() == pytest.approx(0.1 / np.sqrt(3), rel=0.05)
    default = build_model(_tiny(), 12, 12)  # Keras' initializers: zero biases, forget bias 1
    biases = [keras.ops.convert_to_numpy(w) for w in default.weights if w.path.endswith("bias")]
    assert any(np.all(b == 0) for b in biases)


def test_global_clipnorm_reaches_the_optimizer_and_excludes_clipnorm():
    model = compile_model(build_model(_tiny(clipnorm=0.0, global_clipnorm=5.0), 12, 12),
                          _tiny(clipnorm=0.0, global_clipnorm=5.0))
    assert (model.optimizer.clipnorm, model.optimizer.global_clipnorm) == (None, 5.0)
    problems = config_problems(_tiny(clipnorm=1.0, global_clipnorm=5.0))
    assert problems and "global_clipnorm=5.0 (expected 0 while clipnorm=1.0" in problems[0]
    assert "loss_normalization='batch'" in config_problems(_tiny(loss_normalization="batch"))[0]


@pytest.mark.parametrize("smoothing", [0.0, 0.1])
def test_the_fused_cross_entropy_and_its_gradient_are_those_of_the_log_softmax(smoothing):
    from zoo.training.loss import token_cross_entropy

    rng = np.random.default_rng(3)
    logits = tf.constant(rng.normal(size=(2, 5, 300)).astype(np.float32) * 6)  # wide: some p underflow exp
    labels = tf.constant(rng.integers(0, 300, size=(2, 5)), tf.int32)
    weights = tf.constant(rng.random((2, 5)).astype(np.float32))
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(logits)
        fused = token_cross_entropy(labels, logits, smoothing)
        log_probs = tf.nn.log_softmax(tf.cast(logits, tf.float64))
        picked = -tf.gather(log_probs, labels[..., None], batch_dims=2)[..., 0]
        reference = (1 - smoothing) * picked - smoothing * tf.reduce_mean(log_probs, axis=-1)
        fused_sum = tf.reduce_sum(fused * weights)
        reference_sum = tf.reduce_sum(reference * tf.cast(weights, tf.float64))
    np.testing.assert_allclose(fused.numpy(), reference.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(tape.gradient(fused_sum, logits).numpy(), tape.gradient(reference_sum, logits).numpy(),
                               atol=1e-6)
    compiled = tf.function(lambda x: token_cross_entropy(labels, x, smoothing), jit_compile=True)
    np.testing.assert_allclose(compiled(logits).numpy(), fused.numpy(), rtol=1e-5, atol=1e-5)


def test_the_accuracy_counts_the_real_tokens_whose_argmax_is_the_reference():
    from zoo.training.optimization import MaskedAccuracy

    logits = np.random.default_rng(5).normal(size=(2, 4, 30)).astype(np.float32)
    logits[..., 0] = -10.0  # no real token's arg-max is the padding id
    targets = np.argmax(logits, axis=-1).astype(np.int32)
    targets[0, 1] = (targets[0, 1] + 1) % 30  # a miss
    targets[1, 2:] = 0  # padding, not counted
    metric = MaskedAccuracy()
    metric.update_state(tf.constant(targets), tf.constant(logits))
    assert float(metric.result()) == pytest.approx(5 / 6)  # 6 real tokens, one missed
