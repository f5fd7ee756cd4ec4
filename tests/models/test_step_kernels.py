"""A decoding step that reads its kernels cast once (`step_kernels`) computes the step that reads the weights.

With an LSTM decoder the Luong and Bahdanau models add "step_gates": the first cell's gates
are then one product of `[E y_{t-1}; extra_t; h_{t-1}]` by the stacked kernels, where the
step without kernels adds three products (`LSTMCell.fused_step` against `LSTMCell.step`).
"""

import keras
import numpy as np
import pytest
import tensorflow as tf

import zoo.models

SOURCE = np.array([[5, 6, 7, 8, 0, 0], [9, 10, 11, 12, 13, 14]], dtype="int32")
TOKENS = np.array([[5, 6, 7], [8, 9, 10]], dtype="int32")  # (B, K): three hypotheses per sentence


@pytest.mark.parametrize(
    "preset, overrides, fused",
    [
        ("luong_general", {}, True),
        ("luong_dot", {"input_feeding": False, "decoder_units": 16}, True),
        ("luong_general", {"decoder_layers": 2}, True),
        ("luong_general", {"decoder_cell": "gru"}, False),  # a GRU's reset gate multiplies its recurrent part
        ("bahdanau", {}, True),
        ("bahdanau", {"decoder_cell": "gru"}, False),
        ("rnnenc", {}, False),
    ],
)
def test_a_step_with_its_kernels_cast_once_matches_the_step_without(preset, overrides, fused):
    keras.utils.set_random_seed(0)
    sizes = dict(embedding_dim=16, encoder_units=8, decoder_units=12, dropout=0.0)
    model = zoo.models.build(preset, 50, 60, **dict(sizes, **overrides))
    memory, state = model.encode(SOURCE)
    # Distinct states per hypothesis, so that the recurrent part of the gates matters.
    noise = tf.random.stateless_normal((2, 3, 1), (3, 4))
    state = tuple(tf.cast(tf.expand_dims(tf.cast(s, "float32"), 1) + noise, s.dtype) for s in state)
    kernels = model.step_kernels()
    assert ("step_gates" in kernels.names) == fused
    with_kernels = model.step(TOKENS, state, memory, kernels=kernels)
    without = model.step(TOKENS, state, memory)
    np.testing.assert_allclose(with_kernels[0], without[0], rtol=1e-5, atol=1e-5)  # log-probabilities
    for new, reference in zip(with_kernels[1], without[1]):
        np.testing.assert_allclose(new, reference, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(with_kernels[2], without[2], rtol=1e-5, atol=1e-6)  # attention
