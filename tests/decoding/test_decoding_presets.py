"""Greedy and beam search on the real presets of `zoo.models`, tiny sizes, random weights."""

import numpy as np
import pytest
import tensorflow as tf
from decoding_toy_model import hypotheses

import zoo.models
from zoo.data.vocabulary import EOS_ID
from zoo.decoding import beam_search, greedy_search, sequence_log_prob

TINY = dict(embedding_dim=8, encoder_units=8, decoder_units=16, attention_units=8, output_units=8, attention_rank=4)
SOURCE = np.array([[5, 6, 7, 8, 9], [9, 10, 0, 0, 0], [11, 4, 7, 0, 0]], np.int32)


def tiny_model(name, **overrides):
    keras_seed = sum(map(ord, name))
    tf.keras.utils.set_random_seed(keras_seed)
    accepted = zoo.models.catalog.get_preset(name).defaults
    model = zoo.models.build(name, 14, 12, **{k: v for k, v in TINY.items() if k in accepted}, **overrides)
    # Random weights rarely pick the end token: raise its output bias so hypotheses end too.
    (bias,) = [w for w in model.weights if tuple(w.shape) == (12,)]
    bias.assign(bias.numpy() + 1.5 * np.eye(12, dtype=np.float32)[EOS_ID])
    return model


@pytest.mark.parametrize("name", zoo.models.presets())
def test_preset_decodes_consistently(name):
    model = tiny_model(name)
    options = dict(beam_width=3, num_hypotheses=3, length_penalty=0.6, max_length=7)
    result = beam_search(model, SOURCE, **options)

    # The reported log-probabilities are the model's teacher-forced ones.
    for n in range(3):
        scored = sequence_log_prob(model, SOURCE, result.ids[:, n], append_end=False)
        np.testing.assert_allclose(scored, result.log_probs[:, n], rtol=1e-4, atol=1e-5)
    assert np.any(result.ids.numpy() == EOS_ID), "the test should cover hypotheses that end"

    # Beam width 1 is greedy search.
    greedy = greedy_search(model, SOURCE, max_length=7)
    beam_one = beam_search(model, SOURCE, beam_width=1, length_penalty=0.0, max_length=7)
    np.testing.assert_array_equal(beam_one.ids.numpy(), greedy.ids.numpy())
    np.testing.assert_allclose(beam_one.log_probs, greedy.log_probs, rtol=1e-5)

    # A sentence decodes the same alone, without padding.
    alone = beam_search(model, SOURCE[1:2, :2], **options)
    assert hypotheses(alone) == hypotheses(result, 1)
    np.testing.assert_allclose(alone.scores[0], result.scores[1], rtol=1e-4, atol=1e-5)


# One preset per decoder class (the Luong variants differ only in their attention
# layer): an XLA compilation takes ~10 s on 2 CPU cores.
@pytest.mark.parametrize("name", ["rnnenc", "bahdanau", "luong_general"])
def test_preset_beam_search_compiles_with_xla(name):
    model = tiny_model(name)
    options = dict(num_hypotheses=2, length_penalty=0.6, max_length=7)
    eager = beam_search(model, SOURCE, beam_width=3, **options)
    compiled = tf.function(lambda source, width: beam_search(model, source, width, **options), jit_compile=True)
    result = compiled(SOURCE, tf.constant(3))
    np.testing.assert_array_equal(result.ids.numpy(), eager.ids.numpy())
    np.testing.assert_allclose(result.scores, eager.scores, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(result.attention, eager.attention, atol=1e-5)
