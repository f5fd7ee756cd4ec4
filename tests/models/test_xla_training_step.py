"""The training step compiles with XLA (`jit_compile`) and computes what it computes without."""

import keras
import numpy as np
import pytest
import tensorflow as tf

import zoo.models
from zoo.training.loss import TokenCrossEntropy

SOURCE = np.array([[4, 5, 6, 7, 8], [9, 10, 11, 0, 0]], "int32")
TARGET_IN = np.array([[2, 4, 5, 6], [2, 7, 8, 0]], "int32")
TARGET_OUT = np.array([[4, 5, 6, 3], [7, 8, 3, 0]], "int32")


@pytest.mark.slow
@pytest.mark.parametrize("preset", ["bahdanau", "luong_concat"])  # additive; concat + attentional vector
def test_xla_gradients_equal_the_graph_gradients(preset):
    keras.utils.set_random_seed(3)
    extra = dict(attention_units=5, **({"output_units": 4} if preset == "bahdanau" else {}))
    model = zoo.models.build(preset, 20, 15, embedding_dim=6, encoder_units=4, decoder_units=8, dropout=0.0, **extra)
    loss = TokenCrossEntropy()

    def step(source, target_in, target_out):
        with tf.GradientTape() as tape:
            value = loss(target_out, model((source, target_in), training=True))
        return value, tape.gradient(value, model.trainable_variables)

    # Unknown batch and time dimensions, as Keras traces its train function for all batches.
    signature = [tf.TensorSpec([None, None], tf.int32)] * 3
    graph = tf.function(step, input_signature=signature)(SOURCE, TARGET_IN, TARGET_OUT)
    xla = tf.function(step, input_signature=signature, jit_compile=True)(SOURCE, TARGET_IN, TARGET_OUT)
    assert float(graph[0]) == pytest.approx(float(xla[0]), rel=1e-6)
    for expected, compiled in zip(graph[1], xla[1]):
        np.testing.assert_allclose(tf.convert_to_tensor(compiled), tf.convert_to_tensor(expected), atol=1e-6)
