"""The bidirectional RNN encoder shared by every preset."""

import keras
from keras import ops

from zoo.constants import ENCODER_IMPLEMENTATIONS
from zoo.models.keras_recurrent import keras_bidirectional_layer
from zoo.models.listed_layers import with_listed_layers
from zoo.models.loop_kernels import LoopKernels, defers
from zoo.models.recurrent_cells import make_cell
from zoo.models.time_loop import scan


@keras.saving.register_keras_serializable(package="zoo")
class BidirectionalEncoder(keras.layers.Layer):
    """Stacked bidirectional LSTM or GRU over embedded source tokens.

    Each layer reads the sequence forwards and backwards and concatenates the two
    outputs, `h_j = [h_j_fwd; h_j_bwd]` (Bahdanau et al., 2015, section 3.2).
    Padding is masked: a state does not change at a padded position, so the
    backward RNN effectively starts at the last real token and a sentence
    encodes the same whatever length it is padded to; padded outputs are 0.

    With `implementation="zoo"` both directions run in one time loop of the zoo's own
    cells, the input projections of the whole sequence are computed before it as one
    matrix product per direction, and the recurrent kernels' gradients are taken after it in training
    (`LoopKernels`); the whole step compiles with XLA. With `implementation="keras"` each
    layer is Keras' own `Bidirectional(LSTM/GRU)`, which runs cuDNN's kernels on a GPU
    (the pipeline pads on the right, as cuDNN needs) but no longer compiles with XLA. Both
    compute the same function, and `zoo.models.keras_recurrent.copy_encoder_weights`
    carries trained weights from one to the other.

    Args:
        cell: "lstm" or "gru".
        units: size of each direction; outputs have `2 * units` features.
        num_layers: number of stacked bidirectional layers.
        dropout: dropout between layers (on each layer's input but the first).
        implementation: "zoo" (default) or "keras", see above.

    Call arguments:
        embedded: `(B, S, E)` embedded source tokens.
        mask: bool `(B, S)`, True for real tokens.

    Returns:
        `(outputs, final_forward, final_backward)`: `outputs` `(B, S, 2U)` of the top
        layer; the top layer's final forward state (after the last real token) and
        final backward state (after the first token), each `(B, U)` (the hidden
        state `h` for both cell kinds).
    """

    def __init__(self, cell="lstm", units=256, num_layers=1, dropout=0.0, implementation="zoo", **kwargs):
        super().__init__(**kwargs)
        if cell not in ("lstm", "gru"):
            raise ValueError(f"BidirectionalEncoder: cell must be 'lstm' or 'gru', received {cell!r}.")
        if implementation not in ENCODER_IMPLEMENTATIONS:
            raise ValueError(f"BidirectionalEncoder: implementation must be one of {list(ENCODER_IMPLEMENTATIONS)}, "
                             f"received {implementation!r}.")
        if int(units) <= 0 or int(num_layers) <= 0:
            raise ValueError(
                f"BidirectionalEncoder: units and num_layers must be positive, received "
                f"units={units}, num_layers={num_layers}."
            )
        self.cell = cell
        self.units = int(units)
        self.num_layers = int(num_layers)
        self.dropout = float(dropout)
        self.implementation = implementation
        self.supports_masking = True
        self.dropouts = [keras.layers.Dropout(self.dropout, dtype=self.dtype_policy) for _ in range(self.num_layers)]

    def build(self, embedded_shape, mask_shape=None):
        input_dim = int(embedded_shape[-1])
        self.forward_cells, self.backward_cells, self.keras_layers = [], [], []
        for i in range(self.num_layers):
            if self.implementation == "keras":
                layer = keras_bidirectional_layer(self.cell, self.units, name=f"bidirectional_{i}",
                                                  dtype=self.dtype_policy)
                layer.build((None, None, input_dim if i == 0 else 2 * self.units))
                self.keras_layers.append(layer)
                continue
            for direction, cells in (("forward", self.forward_cells), ("backward", self.backward_cells)):
                cell = make_cell(self.cell, self.units, input_dim if i == 0 else 2 * self.units,
                                 name=f"{direction}_{i}", dtype=self.dtype_policy)
                cell.build()
                cells.append(cell)
        self.built = True

    def _trackable_children(self, save_type="checkpoint", **kwargs):
        return with_listed_layers(self, super()._trackable_children(save_type, **kwargs), save_type)

    def compute_mask(self, embedded, mask=None):
        return None

    def _bidirectional_layer(self, inputs, mask, forward_cell, backward_cell, training=None):
        units = self.units
        time_mask = ops.cast(ops.transpose(mask)[:, :, None], inputs.dtype)  # (S, B, 1)
        # Time-major, and reversed for the backward direction, before the projections: copies of
        # (B, S, E), not of the wider (B, S, G).
        inputs = ops.transpose(inputs, (1, 0, 2))  # (S, B, E)
        forward_gates = forward_cell.project_inputs(inputs)  # (S, B, G)
        backward_gates = backward_cell.project_inputs(ops.flip(inputs, 0))
        kernels = LoopKernels(self.compute_dtype, deferred=defers(training))
        if forward_cell.additive:  # an LSTM's recurrent kernels get their gradients after the loop
            for name, cell in (("forward", forward_cell), ("backward", backward_cell)):
                kernels.add(name, cell.recurrent_kernel)
            forward_gates = kernels.route(forward_gates, ["forward"])
            backward_gates = kernels.route(backward_gates, ["backward"])
        steps = (forward_gates, backward_gates, time_mask, ops.flip(time_mask, 0))
        zeros = ops.zeros_like(forward_gates[0, :, :units])  # (B, U)
        init = (forward_cell.initial_state(zeros), backward_cell.initial_state(zeros))

        def body(carry, step):
            outputs, new_carry = [], []
            for name, cell, state, gates, keep in (
                ("forward", forward_cell, carry[0], step[0], step[2]),
                ("backward", backward_cell, carry[1], step[1], step[3]),
            ):
                # The recurrent kernel cast once (None: the cell's own), recording h_{t-1}.
                output, new_state = cell.step(gates, state, recurrent_kernel=kernels.use(name, state[0]))
                # A padded step leaves the state as it was and outputs zeros.
                new_carry.append(tuple(ops.where(keep > 0, n, o) for n, o in zip(new_state, state)))
                outputs.append(keep * output)
            return tuple(new_carry), (ops.concatenate(outputs, axis=-1), kernels.recorded())

        (forward_state, backward_state), (outputs, inputs) = scan(body, init, steps)
        kernels.set_inputs(inputs)
        # outputs (S, B, 2U); one split, whose gradient is one concatenation (two slices' would be
        # two (S, B, 2U) copies and their sum)
        forward_outputs, backward_outputs = ops.split(outputs, 2, axis=-1)
        backward_outputs = ops.flip(backward_outputs, 0)
        outputs = ops.transpose(ops.concatenate([forward_outputs, backward_outputs], axis=-1), (1, 0, 2))
        return outputs, forward_state[0], backward_state[0]

    def call(self, embedded, mask, training=None):
        outputs = embedded
        for i in range(self.num_layers):
            if i > 0:
                outputs = self.dropouts[i](outputs, training=training)
            if self.implementation == "keras":
                outputs, final_forward, final_backward = self._keras_layer(outputs, mask, self.keras_layers[i])
                continue
            outputs, final_forward, final_backward = self._bidirectional_layer(
                outputs, mask, self.forward_cells[i], self.backward_cells[i], training=training
            )
        return outputs, final_forward, final_backward

    def _keras_layer(self, inputs, mask, layer):
        """One layer through Keras' `Bidirectional`: padded outputs zeroed, as the zoo's loop leaves them."""
        results = layer(inputs, mask=mask)  # [outputs, forward states..., backward states...]
        states = 2 if self.cell == "lstm" else 1
        outputs = results[0] * ops.cast(mask, results[0].dtype)[..., None]
        return outputs, results[1], results[1 + states]

    def get_config(self):
        config = super().get_config()
        config.update(
            {"cell": self.cell, "units": self.units, "num_layers": self.num_layers, "dropout": self.dropout,
             "implementation": self.implementation}
        )
        return config
