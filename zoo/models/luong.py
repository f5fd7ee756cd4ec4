"""Luong et al.'s global attention encoder-decoder."""

import keras
from keras import ops

from zoo import layers
from zoo.models.recurrent_cells import make_cell
from zoo.models.seq2seq import Seq2Seq

ATTENTIONS = {
    "dot": lambda units, rank, dtype: layers.DotAttention(name="attention", dtype=dtype),
    "general": lambda units, rank, dtype: layers.GeneralAttention(name="attention", dtype=dtype),
    "concat": lambda units, rank, dtype: layers.ConcatAttention(units, name="attention", dtype=dtype),
    "reduced_rank": lambda units, rank, dtype: layers.ReducedRankAttention(rank, name="attention", dtype=dtype),
    "additive": lambda units, rank, dtype: layers.AdditiveAttention(units, name="attention", dtype=dtype),
}


@keras.saving.register_keras_serializable(package="zoo")
class LuongSeq2Seq(Seq2Seq):
    """Global attention on the current decoder state, with input feeding.

    At step t the stacked decoder RNN reads `[E y_{t-1}; h~_{t-1}]` (input
    feeding) and gives `s_t`; attention scores `s_t` against the encoder outputs
    and gives the context `c_t`; the attentional vector is
    `h~_t = tanh(W_c [c_t; s_t])` and `p(y_t) = softmax(W_s h~_t)`.
    The decoder starts from `tanh(W_b [h_fwd; h_bwd])` of the encoder's final
    states in every layer (a dense bridge, since the encoder is bidirectional)
    and `h~_0 = 0`.

    Args (beyond `Seq2Seq`'s):
        attention: "dot", "general", "concat", "reduced_rank" or "additive".
        attention_units: hidden size of the concat/additive scores.
        attention_rank: rank of the reduced-rank score.
        decoder_layers: number of stacked decoder RNN layers.
        input_feeding: feed `h~_{t-1}` into the next step (section 3.3).

    Reference: Luong, Pham, Manning, "Effective Approaches to Attention-based
    Neural Machine Translation", EMNLP 2015, sections 3.1 and 3.3.
    """

    def __init__(
        self,
        *args,
        attention="general",
        attention_units=256,
        attention_rank=64,
        decoder_layers=1,
        input_feeding=True,
        **kwargs,
    ):
        if attention not in ATTENTIONS:
            raise ValueError(f"LuongSeq2Seq: unknown attention {attention!r}; expected one of {sorted(ATTENTIONS)}.")
        self.attention_type = attention
        self.attention_units = attention_units
        self.attention_rank = attention_rank
        self.decoder_layers = int(decoder_layers)
        self.input_feeding = bool(input_feeding)
        super().__init__(*args, **kwargs)

    def make_decoder(self):
        units = self.decoder_units
        feed_dim = units if self.input_feeding else 0
        self.cells = [
            make_cell(self.decoder_cell, units, self.embedding_dim if i == 0 else units,
                      feed_dim if i == 0 else 0, name=f"decoder_cell_{i}", dtype=self.dtype_policy)
            for i in range(self.decoder_layers)
        ]
        self.bridges = [
            keras.layers.Dense(units, activation="tanh", name=f"bridge_{i}", dtype=self.dtype_policy) for i in range(self.decoder_layers)
        ]
        self.attention = ATTENTIONS[self.attention_type](self.attention_units, self.attention_rank, self.dtype_policy)
        self.attentional = keras.layers.Dense(units, activation="tanh", use_bias=False, name="attentional", dtype=self.dtype_policy)
        self.output_projection = keras.layers.Dense(self.target_vocab_size, name="output_projection", dtype=self.dtype_policy)

    @property
    def decoder_input_cell(self):
        return self.cells[0]

    def decoder_memory(self, outputs, mask, final_forward, final_backward):
        if not self.attention.built:
            self.attention.build((None, None, self.decoder_units), tuple(outputs.shape))
        memory = {"values": outputs, "keys": self.attention.precompute(outputs), "mask": mask}
        final = ops.concatenate([final_forward, final_backward], axis=-1)  # (B, 2U_enc)
        state = []
        for cell, bridge in zip(self.cells, self.bridges):
            state.extend(cell.initial_state(bridge(final)))
        if self.input_feeding:
            state.append(ops.zeros((ops.shape(outputs)[0], self.decoder_units), dtype=outputs.dtype))
        return memory, tuple(state)

    def recur(self, gates, state, memory, training=None):
        state = list(state)
        feed = state.pop() if self.input_feeding else None
        new_state = []
        inputs = None
        for i, cell in enumerate(self.cells):
            cell_state, state = tuple(state[: cell.num_states]), state[cell.num_states :]
            if i == 0:
                cell_gates = gates if feed is None else gates + cell.project_extra(feed)
            else:
                cell_gates = cell.project_inputs(inputs)
            inputs, cell_state = cell.step(cell_gates, cell_state)
            new_state.extend(cell_state)
        # inputs: s_t (B, K, D); the K hypotheses are K queries of the same sentence.
        context, weights = self.attention(inputs, memory["values"], mask=memory["mask"], keys=memory["keys"])
        attentional = self.attentional(ops.concatenate([context, inputs], axis=-1))  # h~_t (B, K, D)
        if self.input_feeding:
            new_state.append(attentional)
        return ops.concatenate([attentional, ops.cast(weights, attentional.dtype)], axis=-1), tuple(new_state)

    def output_logits(self, step_outputs, embedded, training=None):
        attentional = step_outputs[..., : self.decoder_units]
        return self.output_projection(self.output_dropout(attentional, training=training))

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "attention": self.attention_type,
                "attention_units": self.attention_units,
                "attention_rank": self.attention_rank,
                "decoder_layers": self.decoder_layers,
                "input_feeding": self.input_feeding,
            }
        )
        return config
