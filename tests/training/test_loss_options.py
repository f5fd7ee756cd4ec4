"""The recipe's loss and initialization options, against their equations."""

import keras
import numpy as np
import pytest

from recipes import load_config
from zoo.training import build_model, compile_model
from zoo.training.loss import TokenCrossEntropy
from zoo.training.validation import config_problems

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
