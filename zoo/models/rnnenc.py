"""The encoder-decoder without attention (RNNenc), the baseline attention beats."""

import keras
from keras import ops

from zoo import model_defaults as defaults
from zoo.models.maxout_output import MaxoutOutput, MaxoutOutputHooks
from zoo.models.recurrent_cells import make_cell
from zoo.models.seq2seq import Seq2Seq


@keras.saving.register_keras_serializable(package="zoo")
class RNNEncSeq2Seq(MaxoutOutputHooks, Seq2Seq):
    """Encoder-decoder with one fixed-length context vector and no attention.

    The whole source is summarised by `c = tanh(V [h_T_fwd; h_1_bwd])`, the final
    states of the bidirectional encoder. `c` conditions every decoder step: the
    RNN reads `[E y_{i-1}; c]`, starts from `s_0 = tanh(W c)`, and the output is
    the deep maxout layer on `(s_i, E y_{i-1}, c)`. The attention weights it
    reports are all zeros. Its projection of `c` into the RNN gates is computed
    once per sentence.

    Args (beyond `Seq2Seq`'s):
        output_units: maxout units of the deep output layer.

    Reference: Cho et al., "Learning Phrase Representations using RNN
    Encoder-Decoder for Statistical Machine Translation", EMNLP 2014; the
    "RNNenc" baseline of Bahdanau et al., ICLR 2015.
    """

    def __init__(self, *args, output_units=defaults.OUTPUT_UNITS, **kwargs):
        self.output_units = int(output_units)
        super().__init__(*args, **kwargs)

    def make_decoder(self):
        units = self.decoder_units
        self.summary = keras.layers.Dense(units, activation="tanh", name="summary", dtype=self.dtype_policy)
        self.cell = make_cell(
            self.decoder_cell, units, self.embedding_dim, units, name="decoder_cell", dtype=self.dtype_policy
        )
        self.bridge = keras.layers.Dense(units, activation="tanh", name="bridge", dtype=self.dtype_policy)
        self.maxout_output = MaxoutOutput(
            self.output_units, self.target_vocab_size, name="maxout_output", dtype=self.dtype_policy
        )

    @property
    def decoder_input_cell(self):
        return self.cell

    def decoder_memory(self, outputs, mask, final_forward, final_backward):
        context = self.summary(ops.concatenate([final_forward, final_backward], axis=-1))  # c (B, D)
        if not self.cell.built:
            self.cell.build()
        memory = {
            "context": context,
            "context_gates": self.cell.project_extra(context),  # (B, G), once per sentence
            "mask": mask,
        }
        return memory, self.cell.initial_state(self.bridge(context))

    def recur(self, gates, state, memory, training=None, kernels=None):
        context_gates = ops.expand_dims(memory["context_gates"], 1)  # (B, 1, G) for all K hypotheses
        output, state = self.cell.step(gates + context_gates, state)
        ones = ops.ones_like(output[..., :1])  # (B, K, 1)
        context = ops.expand_dims(memory["context"], 1) * ones  # (B, K, D)
        weights = ops.expand_dims(ops.zeros_like(ops.cast(memory["mask"], output.dtype)), 1) * ones  # (B, K, S)
        return ops.concatenate([output, context], axis=-1), weights, state  # features [s_i; c]

    def get_config(self):
        config = super().get_config()
        config.update({"output_units": self.output_units})
        return config
