"""The bidirectional RNN encoder shared by every preset."""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="zoo")
class BidirectionalEncoder(keras.layers.Layer):
    """Stacked bidirectional LSTM or GRU over embedded source tokens.

    Each layer reads the sequence forwards and backwards and concatenates the two
    outputs, `h_j = [h_j_fwd; h_j_bwd]` (Bahdanau et al., 2015, section 3.2).
    Padding is masked: the backward RNN starts at the last real token and padded
    positions never change a state, so a sentence encodes the same whatever
    length it is padded to.

    Args:
        cell: "lstm" or "gru".
        units: size of each direction; outputs have `2 * units` features.
        num_layers: number of stacked bidirectional layers.
        dropout: dropout between layers (on each layer's input but the first).

    Call arguments:
        embedded: `(B, S, E)` embedded source tokens.
        mask: bool `(B, S)`, True for real tokens.

    Returns:
        `(outputs, final_forward, final_backward)`: `outputs` `(B, S, 2U)` of the top
        layer; the top layer's final forward state (after the last real token) and
        final backward state (after the first token), each `(B, U)` (the hidden
        state `h` for both cell kinds).
    """

    def __init__(self, cell="lstm", units=256, num_layers=1, dropout=0.0, **kwargs):
        super().__init__(**kwargs)
        if cell not in ("lstm", "gru"):
            raise ValueError(f"BidirectionalEncoder: cell must be 'lstm' or 'gru', received {cell!r}.")
        if int(units) <= 0 or int(num_layers) <= 0:
            raise ValueError(
                f"BidirectionalEncoder: units and num_layers must be positive, received "
                f"units={units}, num_layers={num_layers}."
            )
        self.cell = cell
        self.units = int(units)
        self.num_layers = int(num_layers)
        self.dropout = float(dropout)
        rnn_class = keras.layers.LSTM if cell == "lstm" else keras.layers.GRU
        self.rnns = [
            keras.layers.Bidirectional(
                rnn_class(self.units, return_sequences=True, return_state=True),
                merge_mode="concat",
                name=f"bidirectional_{i}",
            )
            for i in range(self.num_layers)
        ]
        self.supports_masking = True
        self.dropouts = [keras.layers.Dropout(self.dropout) for _ in range(self.num_layers)]

    def compute_mask(self, embedded, mask=None):
        return None

    def call(self, embedded, mask, training=None):
        outputs = embedded
        for i, rnn in enumerate(self.rnns):
            if i > 0:
                outputs = self.dropouts[i](outputs, training=training)
            results = rnn(outputs, mask=mask, training=training)
            outputs = results[0]
            states = results[1:]
            half = len(states) // 2
            final_forward, final_backward = states[0], states[half]
        return outputs, final_forward, final_backward

    def get_config(self):
        config = super().get_config()
        config.update(
            {"cell": self.cell, "units": self.units, "num_layers": self.num_layers, "dropout": self.dropout}
        )
        return config
