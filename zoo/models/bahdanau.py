"""Bahdanau et al.'s RNNsearch."""

import keras
from keras import ops

from zoo import layers
from zoo import model_defaults as defaults
from zoo.models.maxout_output import MaxoutOutput, MaxoutOutputHooks
from zoo.models.recurrent_cells import make_cell
from zoo.models.seq2seq import Seq2Seq


@keras.saving.register_keras_serializable(package="zoo")
class BahdanauSeq2Seq(MaxoutOutputHooks, Seq2Seq):
    """RNNsearch: additive attention on the previous decoder state, context into the RNN.

    At step i the additive score compares the previous state `s_{i-1}` with each
    encoder output `h_j`; the context `c_i = sum_j a_ij h_j` and the previous
    target embedding `E y_{i-1}` are the RNN input: `s_i = f(s_{i-1}, [E y_{i-1}; c_i])`.
    The output is a deep maxout layer on `(s_i, E y_{i-1}, c_i)`:
    `t_i = maxout(W_o [s_i; E y_{i-1}; c_i])`, `p(y_i) = softmax(W_v t_i)`.
    The initial state is `s_0 = tanh(W_s h_1_bwd)`, from the backward encoder state.

    Args (beyond `Seq2Seq`'s):
        attention_units: hidden size of the additive score (n' in the paper).
        output_units: maxout units of the deep output layer (l in the paper).

    Reference: Bahdanau, Cho, Bengio, "Neural Machine Translation by Jointly
    Learning to Align and Translate", ICLR 2015, section 3 and appendix A.
    """

    fuses_step_gates = True  # an LSTM's gates at a decoding step: one product of [E y_{i-1}; c_i; s_{i-1}]

    def __init__(self, *args, attention_units=defaults.ATTENTION_UNITS, output_units=defaults.OUTPUT_UNITS, **kwargs):
        self.attention_units = attention_units
        self.output_units = int(output_units)
        super().__init__(*args, **kwargs)

    def make_decoder(self):
        self.cell = make_cell(
            self.decoder_cell, self.decoder_units, self.embedding_dim, self.memory_dim, name="decoder_cell",
            dtype=self.dtype_policy,
        )
        self.bridge = keras.layers.Dense(self.decoder_units, activation="tanh", name="bridge", dtype=self.dtype_policy)
        self.attention = layers.AdditiveAttention(self.attention_units, name="attention", dtype=self.dtype_policy)
        self.maxout_output = MaxoutOutput(
            self.output_units, self.target_vocab_size, name="maxout_output", dtype=self.dtype_policy
        )

    @property
    def decoder_input_cell(self):
        return self.cell

    def decoder_memory(self, outputs, mask, final_forward, final_backward):
        if not self.attention.built:
            self.attention.build((None, None, self.decoder_units), tuple(outputs.shape))
        memory = {"values": outputs, "keys": self.attention.precompute(outputs), "mask": mask}
        return memory, self.cell.initial_state(self.bridge(final_backward))

    def add_loop_kernels(self, kernels, extra_kernel=None):
        # The context's kernel, and an LSTM's recurrent one: their products are added to the gates unchanged.
        kernels.add("extra", self.cell.extra_kernel if extra_kernel is None else extra_kernel)
        if not self.cell.additive:
            return ["extra"]
        kernels.add("recurrent", self.cell.recurrent_kernel)
        return ["extra", "recurrent"]

    def add_loop_memory(self, kernels, memory):
        # c_i = a_i H: the values' gradient, sum_i a_i^T dc_i, is one batched product after the loop
        # instead of a (B, S, D) product and sum at every step (the keys' is not: the score is additive).
        return dict(memory, values=kernels.add("values", memory["values"], probe=True, per_example="left"))

    def recur(self, gates, state, memory, training=None, kernels=None):
        previous = state[0]  # s_{i-1} (B, K, D)
        context, weights = self.attention(previous, memory["values"], mask=memory["mask"], keys=memory["keys"])
        if kernels is not None and "values" in kernels.names:
            context = kernels.probed("values", context, weights)  # recording a_i
        if kernels is not None and "step_gates" in kernels.names:  # decoding: gates is E y_{i-1}
            output, state = self.cell.fused_step([gates, context, previous], state[1], kernels.use("step_gates", None))
            return ops.concatenate([output, context], axis=-1), weights, state
        extra = self.cell.project_extra(context, kernel=kernels and kernels.use("extra", context))
        recurrent = kernels and kernels.use("recurrent", previous)
        output, state = self.cell.step(gates + extra, state, recurrent_kernel=recurrent)
        return ops.concatenate([output, context], axis=-1), weights, state  # features [s_i; c_i]

    def get_config(self):
        config = super().get_config()
        config.update({"attention_units": self.attention_units, "output_units": self.output_units})
        return config
