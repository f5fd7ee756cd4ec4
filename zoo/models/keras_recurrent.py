"""The zoo's LSTM/GRU cells as Keras' own `LSTM`/`GRU` layers (cuDNN kernels on a GPU), and back.

The cells keep Keras' gate order (LSTM i, f, c, o; GRU z, r, n with the reset gate after
the recurrent product, `reset_after=True`), so the weights carry over: an LSTM's three
arrays as they are; a GRU's single bias becomes Keras' input bias, with a zero recurrent
bias (the candidate's part of it kept at zero in training, `ZeroCandidateRecurrentBias`, so
that a trained Keras GRU still converts back). Keras picks its cuDNN kernel on a GPU when the mask is right-padded (the zoo's
pipeline pads on the right) and the layer keeps its default activations.
"""

import keras
import numpy as np

from zoo.models.recurrent_cells import GRUCell, LSTMCell


def keras_weights(cell):
    """The weights of a built `LSTMCell`/`GRUCell` in the order `keras.layers.LSTM`/`GRU` holds them."""
    kernel, recurrent_kernel, bias = (
        keras.ops.convert_to_numpy(w) for w in (cell.kernel, cell.recurrent_kernel, cell.bias)
    )
    if isinstance(cell, LSTMCell):
        return [kernel, recurrent_kernel, bias]
    if isinstance(cell, GRUCell):
        return [kernel, recurrent_kernel, np.stack([bias, np.zeros_like(bias)])]
    raise TypeError(f"expected an LSTMCell or GRUCell, received {type(cell).__name__}")


def set_cell_weights(cell, layer):
    """Copies the weights of a Keras `LSTM`/`GRU` layer (or its cell, or its weight arrays in
    Keras' order) into a zoo cell of the same sizes.

    Raises:
      ValueError: the shapes differ, or a GRU's recurrent bias on the candidate `n` is not
        zero (it is scaled by the reset gate, which the zoo's single bias cannot express).
    """
    weights = layer if isinstance(layer, (list, tuple)) else layer.weights
    kernel, recurrent_kernel, bias = (keras.ops.convert_to_numpy(w) for w in weights)
    if isinstance(cell, GRUCell):
        if bias.shape != (2, kernel.shape[1]):
            raise ValueError(f"expected a GRU with reset_after=True (bias (2, {kernel.shape[1]})), "
                             f"got bias {bias.shape}")
        units = cell.units
        if np.any(bias[1, 2 * units :]):
            raise ValueError("the GRU's recurrent bias of the candidate gate is not zero; the zoo's GRUCell has none")
        bias = bias[0] + bias[1]  # z and r add the two biases; n's recurrent part is zero
    for variable, value in zip((cell.kernel, cell.recurrent_kernel, cell.bias), (kernel, recurrent_kernel, bias)):
        if tuple(variable.shape) != value.shape:
            raise ValueError(f"{cell.name}/{variable.name}: expected shape {tuple(variable.shape)}, "
                             f"received {value.shape}")
        variable.assign(value)


def keras_layer(cell, **kwargs):
    """A built Keras `LSTM`/`GRU` computing what `cell` computes, with its weights.

    Args:
      cell: a built `LSTMCell` or `GRUCell` whose `projected_dim` is the input size.
      **kwargs: more `keras.layers.LSTM`/`GRU` arguments (`return_sequences`, `go_backwards`, ...).
    """
    layer = _unbuilt_layer(cell, **kwargs)
    layer.build((None, None, cell.projected_dim))
    layer.set_weights(keras_weights(cell))
    return layer


def keras_bidirectional(encoder, layer_index=0):
    """Keras' `Bidirectional` for one layer of a built `zoo.models.BidirectionalEncoder`.

    Called on `(B, S, D)` inputs with a right-padded bool mask `(B, S)`, it returns
    `[outputs (B, S, 2U), forward state..., backward state...]`; times the mask, the
    outputs are the encoder layer's, and the states' `h` are its final states.
    """
    forward, backward = encoder.forward_cells[layer_index], encoder.backward_cells[layer_index]
    layer = keras_bidirectional_layer(encoder.cell, encoder.units)
    layer.build((None, None, forward.projected_dim))
    # Bidirectional rebuilds its forward layer from the config: weights go in afterwards.
    layer.forward_layer.set_weights(keras_weights(forward))
    layer.backward_layer.set_weights(keras_weights(backward))
    return layer


def keras_bidirectional_layer(kind, units, name=None, dtype=None):
    """An unbuilt Keras `Bidirectional` of `LSTM`s or `GRU`s as the zoo's encoder layer computes it.

    Both directions return their sequences and final states; the LSTM's default
    initializers are those of the zoo's `LSTMCell` (forget-gate bias 1), the GRU keeps the
    reset gate after the recurrent product. Default activations and no recurrent dropout:
    Keras runs them with cuDNN on a GPU (`keras.layers.LSTM`'s `use_cudnn="auto"`).
    """
    def direction(backwards):
        return _keras_rnn(kind, units, return_sequences=True, return_state=True, go_backwards=backwards, dtype=dtype,
                          name=f"{'backward' if backwards else 'forward'}_{kind}")

    return keras.layers.Bidirectional(direction(False), backward_layer=direction(True), name=name, dtype=dtype)


def encoder_layer_weights(encoder):
    """`[(forward weights, backward weights) per layer]` of a built `BidirectionalEncoder`, in Keras' order."""
    if encoder.implementation == "keras":
        return [(layer.forward_layer.get_weights(), layer.backward_layer.get_weights())
                for layer in encoder.keras_layers]
    return [(keras_weights(forward), keras_weights(backward))
            for forward, backward in zip(encoder.forward_cells, encoder.backward_cells)]


def copy_encoder_weights(source, target):
    """Copies the weights of a built `BidirectionalEncoder` into another of the same sizes, whatever
    the implementation of each ("zoo" cells or "keras" layers).

    Raises:
      ValueError: the cells, units or layers differ (or see `set_cell_weights`).
    """
    for field in ("cell", "units", "num_layers"):
        if getattr(source, field) != getattr(target, field):
            raise ValueError(f"the encoders differ in {field}: {getattr(source, field)!r} and "
                             f"{getattr(target, field)!r}")
    for i, (forward, backward) in enumerate(encoder_layer_weights(source)):
        if target.implementation == "keras":
            target.keras_layers[i].forward_layer.set_weights(forward)
            target.keras_layers[i].backward_layer.set_weights(backward)
        else:
            set_cell_weights(target.forward_cells[i], forward)
            set_cell_weights(target.backward_cells[i], backward)


def _unbuilt_layer(cell, **kwargs):
    if cell.extra_dim:
        raise ValueError(f"{cell.name} takes {cell.extra_dim} extra inputs inside its loop; a Keras layer cannot")
    return _keras_rnn("lstm" if isinstance(cell, LSTMCell) else "gru", cell.units, **kwargs)


def _keras_rnn(kind, units, **kwargs):
    """Keras' `LSTM`, or `GRU` with the reset gate after the recurrent product, as the zoo's cells."""
    if kind == "lstm":
        return keras.layers.LSTM(units, **kwargs)
    return keras.layers.GRU(units, reset_after=True, bias_constraint=ZeroCandidateRecurrentBias(), **kwargs)


@keras.saving.register_keras_serializable(package="zoo")
class ZeroCandidateRecurrentBias(keras.constraints.Constraint):
    """Keeps the recurrent bias of a Keras GRU's candidate (`bias[1, 2U:]` of its `(2, 3U)` bias) at zero.

    The reset gate scales that bias, which the zoo's `GRUCell` (one bias) cannot express: the optimizer
    applies this after each update, so a GRU trained with Keras' layers converts to the zoo's cells.
    """

    def __call__(self, bias):
        units = bias.shape[-1] // 3
        keep = np.ones(tuple(bias.shape), dtype="float32")
        keep[1, 2 * units :] = 0.0
        return bias * keras.ops.cast(keep, bias.dtype)


def with_encoder_implementation(model, implementation):
    """`model` (a built zoo `Seq2Seq`) with its encoder in `implementation` ("zoo" or "keras"):
    `model` itself when it has it already, else a new model of the same class and config
    holding the same weights (the optimizer's state is not carried).

    A model trained with Keras' cuDNN layers on a GPU becomes one of the zoo's own cells
    (what the export traces, so that a SavedModel serves on any device), and the other way.
    """
    if model.encoder_implementation == implementation:
        return model
    config = dict(model.get_config(), encoder_implementation=implementation)
    converted = type(model).from_config(config)
    converted((np.ones((1, 2), "int32"), np.ones((1, 2), "int32")))  # builds every weight
    mine = {id(v) for v in model.encoder.weights}
    theirs = {id(v) for v in converted.encoder.weights}
    source = [v for v in model.weights if id(v) not in mine]
    target = [v for v in converted.weights if id(v) not in theirs]
    if [v.path for v in source] != [v.path for v in target]:
        raise ValueError(f"{model.name}: the weights outside the encoder differ after the conversion: "
                         f"{[v.path for v in source]} and {[v.path for v in target]}")
    for old, new in zip(source, target):
        new.assign(old)
    copy_encoder_weights(model.encoder, converted.encoder)
    return converted
