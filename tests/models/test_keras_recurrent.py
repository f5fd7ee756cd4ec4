"""The zoo's LSTM/GRU weights in Keras' own layers (the cuDNN path on a GPU) give the same numbers."""

import keras
import numpy as np
import pytest

import zoo.models
from zoo.models import keras_recurrent
from zoo.models.encoder import BidirectionalEncoder
from zoo.models.recurrent_cells import make_cell

LENGTHS = np.array([7, 4, 1])  # right-padded, as the pipeline pads
MASK = np.arange(7)[None, :] < LENGTHS[:, None]  # (3, 7)
EMBEDDED = np.random.RandomState(0).normal(size=(3, 7, 5)).astype("float32")


def _randomize_biases(cells, seed):
    for i, cell in enumerate(cells):
        cell.bias.assign(np.random.RandomState(seed + i).normal(size=cell.bias.shape).astype("float32"))


@pytest.mark.parametrize("kind", ["lstm", "gru"])
def test_keras_bidirectional_layers_compute_the_encoder(kind):
    keras.utils.set_random_seed(1)
    encoder = BidirectionalEncoder(kind, units=6, num_layers=2)
    encoder(EMBEDDED, mask=MASK)  # builds it
    _randomize_biases(encoder.forward_cells + encoder.backward_cells, seed=3)
    outputs, final_forward, final_backward = (keras.ops.convert_to_numpy(t) for t in encoder(EMBEDDED, mask=MASK))

    states = 2 if kind == "lstm" else 1
    inputs = EMBEDDED
    for i in range(2):
        results = keras_recurrent.keras_bidirectional(encoder, i)(inputs, mask=MASK)
        inputs = keras.ops.convert_to_numpy(results[0]) * MASK[..., None]  # padded outputs are 0 in the zoo
    np.testing.assert_allclose(inputs, outputs, atol=1e-5)
    np.testing.assert_allclose(results[1], final_forward, atol=1e-5)  # h after the last real token
    np.testing.assert_allclose(results[1 + states], final_backward, atol=1e-5)  # h after the first token
    assert np.abs(outputs).max() > 0.1 and np.abs(final_backward[2] - final_backward[0]).max() > 1e-2


def _run_cell(cell, inputs):
    """The zoo cell over `(B, T, D)` inputs, step by step; returns the last `h`."""
    state = cell.initial_state(keras.ops.zeros((inputs.shape[0], cell.units)))
    for t in range(inputs.shape[1]):
        h, state = cell.step(cell.project_inputs(inputs[:, t]), state)
    return keras.ops.convert_to_numpy(h)


@pytest.mark.parametrize("kind", ["lstm", "gru"])
def test_keras_layer_weights_load_into_a_cell(kind):
    keras.utils.set_random_seed(2)
    layer = keras.layers.LSTM(4) if kind == "lstm" else keras.layers.GRU(4, reset_after=True)
    layer.build((None, None, 5))
    weights = [np.random.RandomState(i).normal(size=w.shape).astype("float32") for i, w in enumerate(layer.weights)]
    if kind == "gru":
        weights[2][1, 8:] = 0.0  # the candidate's recurrent bias: the zoo's GRU has none
    layer.set_weights(weights)
    cell = make_cell(kind, 4, 5)
    cell.build()
    keras_recurrent.set_cell_weights(cell, layer)
    np.testing.assert_allclose(_run_cell(cell, EMBEDDED), keras.ops.convert_to_numpy(layer(EMBEDDED)), atol=1e-5)
    back = keras_recurrent.keras_layer(cell)
    np.testing.assert_allclose(keras.ops.convert_to_numpy(back(EMBEDDED)), keras.ops.convert_to_numpy(layer(EMBEDDED)),
                               atol=1e-5)


def test_a_gru_candidate_recurrent_bias_is_refused():
    layer = keras.layers.GRU(4, reset_after=True)
    layer.build((None, None, 5))
    kernel, recurrent_kernel, bias = layer.get_weights()
    bias[1, 9] = 0.5
    layer.set_weights([kernel, recurrent_kernel, bias])
    cell = make_cell("gru", 4, 5)
    cell.build()
    with pytest.raises(ValueError, match="recurrent bias of the candidate gate is not zero"):
        keras_recurrent.set_cell_weights(cell, layer)


@pytest.mark.parametrize("preset, cell", [("luong_general", "lstm"), ("bahdanau", "gru")])
def test_a_model_converts_between_encoder_implementations_with_the_same_outputs(preset, cell, tmp_path):
    keras.utils.set_random_seed(4)
    sizes = dict(embedding_dim=8, encoder_units=6, encoder_layers=2, encoder_cell=cell, decoder_units=10,
                 attention_units=5, dropout=0.0, **({"output_units": 4} if preset == "bahdanau" else {}))
    model = zoo.models.build(preset, 30, 40, **sizes)
    batch = (np.array([[4, 5, 6, 7], [8, 9, 0, 0]], "int32"), np.array([[1, 5, 6], [1, 9, 0]], "int32"))
    own = keras.ops.convert_to_numpy(model(batch))
    converted = zoo.models.with_encoder_implementation(model, "keras")
    assert converted.encoder_implementation == "keras" and converted.encoder.keras_layers
    np.testing.assert_allclose(keras.ops.convert_to_numpy(converted(batch)), own, atol=1e-5)
    path = str(tmp_path / "keras_encoder.keras")  # the choice survives saving
    converted.save(path)
    reloaded = keras.saving.load_model(path)
    assert reloaded.encoder_implementation == "keras"
    back = zoo.models.with_encoder_implementation(reloaded, "zoo")
    assert back.encoder_implementation == "zoo" and zoo.models.with_encoder_implementation(back, "zoo") is back
    np.testing.assert_allclose(keras.ops.convert_to_numpy(back(batch)), own, atol=1e-5)


def test_the_keras_layers_keep_what_cudnn_needs():
    # Keras' LSTM/GRU take cuDNN's kernels on a GPU with these settings (keras.layers.LSTM's use_cudnn="auto").
    for kind in ("lstm", "gru"):
        encoder = BidirectionalEncoder(kind, units=4, implementation="keras")
        encoder(EMBEDDED, mask=MASK)
        for layer in (encoder.keras_layers[0].forward_layer, encoder.keras_layers[0].backward_layer):
            cell = layer.cell
            assert layer.use_cudnn == "auto" and not layer.unroll and cell.use_bias and not cell.recurrent_dropout
            assert cell.activation is keras.activations.tanh and cell.recurrent_activation is keras.activations.sigmoid
            assert kind == "lstm" or cell.reset_after


def test_a_bad_implementation_and_mismatched_encoders_are_refused():
    with pytest.raises(ValueError, match=r"implementation must be one of \['zoo', 'keras'\], received 'cudnn'"):
        BidirectionalEncoder("lstm", units=4, implementation="cudnn")
    small, large = BidirectionalEncoder("lstm", units=4), BidirectionalEncoder("lstm", units=6, implementation="keras")
    small(EMBEDDED, mask=MASK), large(EMBEDDED, mask=MASK)
    with pytest.raises(ValueError, match="the encoders differ in units: 4 and 6"):
        keras_recurrent.copy_encoder_weights(small, large)


def test_a_trained_keras_gru_encoder_converts_to_the_zoo_cells():
    # Training moves every weight it is free to move: the candidate's recurrent bias must stay at 0, or the
    # model could not become the zoo's cells (what the export traces) after a run with encoder_implementation=keras.
    keras.utils.set_random_seed(5)
    model = zoo.models.build("bahdanau", 30, 40, embedding_dim=8, encoder_units=6, encoder_cell="gru",
                             encoder_implementation="keras", decoder_units=10, attention_units=5, output_units=4)
    model.compile(optimizer=keras.optimizers.Adam(0.1), loss=keras.losses.SparseCategoricalCrossentropy(True))
    source = np.array([[4, 5, 6, 7], [8, 9, 0, 0]], "int32")
    target_in, target_out = np.array([[2, 5, 6], [2, 9, 7]], "int32"), np.array([[5, 6, 3], [9, 7, 3]], "int32")
    model.fit((source, target_in), target_out, epochs=3, verbose=0)
    biases = [layer.cell.bias for bidirectional in model.encoder.keras_layers
              for layer in (bidirectional.forward_layer, bidirectional.backward_layer)]
    assert all(np.abs(keras.ops.convert_to_numpy(bias)[0]).max() > 0 for bias in biases)  # the others trained
    converted = zoo.models.with_encoder_implementation(model, "zoo")
    np.testing.assert_allclose(keras.ops.convert_to_numpy(converted((source, target_in))),
                               keras.ops.convert_to_numpy(model((source, target_in))), atol=1e-5)
