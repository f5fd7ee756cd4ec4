"""Luong et al.'s global attention encoder-decoder."""

import keras
from keras import ops

from zoo import layers
from zoo.layers.linear import linear
from zoo import model_defaults as defaults
from zoo.models.recurrent_cells import make_cell
from zoo.models.seq2seq import Seq2Seq


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
        attention: the score, a name from `zoo.layers.names()` (or an alias):
            "dot", "general", "concat", "reduced_rank", "additive".
        attention_units: hidden size of the concat/additive scores.
        attention_rank: rank of the reduced-rank score.
        decoder_layers: int >= 1, number of stacked decoder RNN layers.
        input_feeding: bool, feed `h~_{t-1}` into the next step (section 3.3).
        tie_embeddings: bool, the vocabulary projection is the target embedding
            matrix transposed (plus its own bias): `p(y_t) = softmax(E P h~_t + b)`,
            where `P` (`output_bottleneck`, no bias) maps the decoder's size to the
            embedding size when they differ (Press and Wolf, EACL 2017, section 5).

    Reference: Luong, Pham, Manning, "Effective Approaches to Attention-based
    Neural Machine Translation", EMNLP 2015, sections 3.1 and 3.3.
    """

    fuses_step_gates = True  # an LSTM's gates at a decoding step: one product of [E y_{t-1}; h~_{t-1}; h_{t-1}]

    def __init__(
        self,
        *args,
        attention=defaults.ATTENTION,
        attention_units=defaults.ATTENTION_UNITS,
        attention_rank=defaults.ATTENTION_RANK,
        decoder_layers=defaults.DECODER_LAYERS,
        input_feeding=defaults.INPUT_FEEDING,
        tie_embeddings=defaults.TIE_EMBEDDINGS,
        **kwargs,
    ):
        try:
            layers.canonical_name(attention)
        except ValueError as error:
            raise ValueError(f"LuongSeq2Seq: attention: {error}") from None
        if not isinstance(decoder_layers, int) or isinstance(decoder_layers, bool) or decoder_layers < 1:
            raise ValueError(f"LuongSeq2Seq: decoder_layers must be an int >= 1, received {decoder_layers!r}.")
        if not isinstance(input_feeding, bool):
            raise ValueError(f"LuongSeq2Seq: input_feeding must be True or False, received {input_feeding!r}.")
        if not isinstance(tie_embeddings, bool):
            raise ValueError(f"LuongSeq2Seq: tie_embeddings must be True or False, received {tie_embeddings!r}.")
        self.attention_type = attention
        self.attention_units = attention_units
        self.attention_rank = attention_rank
        self.decoder_layers = decoder_layers
        self.input_feeding = input_feeding
        self.tie_embeddings = tie_embeddings
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
            keras.layers.Dense(units, activation="tanh", name=f"bridge_{i}", dtype=self.dtype_policy)
            for i in range(self.decoder_layers)
        ]
        sizes = {"units": self.attention_units, "rank": self.attention_rank}  # each score takes its own
        self.attention = layers.get(self.attention_type, sizes, name="attention", dtype=self.dtype_policy)
        self.attentional = keras.layers.Dense(units, activation="tanh", use_bias=False, name="attentional",
                                              dtype=self.dtype_policy)
        self.attentional.build((None, self.memory_dim + units))  # its kernel is applied with `linear`
        if not self.tie_embeddings:
            self.output_projection = keras.layers.Dense(self.target_vocab_size, name="output_projection",
                                                        dtype=self.dtype_policy)
            return
        self.output_bottleneck = None
        if units != self.embedding_dim:
            self.output_bottleneck = keras.layers.Dense(self.embedding_dim, use_bias=False, name="output_bottleneck",
                                                        dtype=self.dtype_policy)
        self.output_projection = TiedProjection(self.target_embedding, name="output_projection",
                                                dtype=self.dtype_policy)

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
        for cell in self.cells:  # before the time loop: JAX cannot create weights inside its scan
            if not cell.built:
                cell.build()
        if self.input_feeding:
            state.append(ops.zeros((ops.shape(outputs)[0], self.decoder_units), dtype=outputs.dtype))
        return memory, tuple(state)

    def add_loop_kernels(self, kernels, extra_kernel=None):
        kernels.add("attentional", self.attentional.kernel, probe=True)  # W_c of tanh(W_c [c_t; s_t])
        cell = self.cells[0]
        routed = []  # kernels whose products are added to the gates unchanged
        if cell.additive:  # an LSTM's recurrent kernel (not a GRU's: its candidate multiplies it by the reset gate)
            kernels.add("recurrent", cell.recurrent_kernel)
            routed.append("recurrent")
        if self.input_feeding:  # h~_{t-1}'s kernel, for either cell
            kernels.add("feed", cell.extra_kernel if extra_kernel is None else extra_kernel)
            routed.append("feed")
        return routed

    def add_loop_memory(self, kernels, memory):
        # c_t = a_t H: the values' gradient, sum_t a_t^T dc_t, taken once after the loop; with a
        # dot-product score e_t = q_t K^T, the keys' too, sum_t de_t^T q_t.
        memory = dict(memory, values=kernels.add("values", memory["values"], probe=True, per_example="left"))
        if self.attention.dot_product_score:
            memory["keys"] = kernels.add("keys", memory["keys"], probe=True, per_example="right")
        return memory

    def recur(self, gates, state, memory, training=None, kernels=None):
        state = list(state)
        feed = state.pop() if self.input_feeding else None
        new_state = []
        inputs = None
        for i, cell in enumerate(self.cells):
            cell_state, state = tuple(state[: cell.num_states]), state[cell.num_states :]
            recurrent = None
            if i == 0 and kernels is not None and "step_gates" in kernels.names:  # decoding: gates is E y_{t-1}
                parts = [gates] + ([feed] if feed is not None else []) + [cell_state[0]]
                inputs, cell_state = cell.fused_step(parts, cell_state[1], kernels.use("step_gates", None))
                new_state.extend(cell_state)
                continue
            if i == 0:
                if feed is not None:
                    gates = gates + cell.project_extra(feed, kernel=kernels and kernels.use("feed", feed))
                cell_gates = gates
                recurrent = kernels and kernels.use("recurrent", cell_state[0])
            else:
                cell_gates = cell.project_inputs(inputs)
            inputs, cell_state = cell.step(cell_gates, cell_state, recurrent_kernel=recurrent)
            new_state.extend(cell_state)
        # inputs: s_t (B, K, D); the K hypotheses are K queries of the same sentence.
        if kernels is not None and "keys" in kernels.names:  # teacher forcing: e_t = q_t K^T, recording q_t
            query = self.attention.score_query(inputs)
            scores = kernels.probed("keys", self.attention.dot_scores(query, memory["keys"]), query)
            context, weights = self.attention.attend(scores, memory["values"], mask=memory["mask"], training=training)
        else:
            context, weights = self.attention(inputs, memory["values"], mask=memory["mask"], keys=memory["keys"])
        if kernels is not None and "values" in kernels.names:
            context = kernels.probed("values", context, weights)  # c_t = a_t H, recording a_t
        combined = ops.concatenate([context, inputs], axis=-1)  # [c_t; s_t]
        if kernels is None:
            attentional = ops.tanh(linear(combined, ops.cast(self.attentional.kernel, self.compute_dtype)))
        else:
            attentional = ops.tanh(kernels.product("attentional", combined))  # h~_t (B, K, D)
        if self.input_feeding:
            new_state.append(attentional)
        return attentional, weights, tuple(new_state)

    def output_hidden(self, features, embedded, training=None, kernels=None):
        hidden = self.output_dropout(features, training=training)  # features: h~_t
        if self.tie_embeddings and self.output_bottleneck is not None:
            bottleneck = kernels and kernels.use("output_bottleneck", None)  # cast once by a decoding loop
            # P h~_t, the embedding's size
            hidden = self.output_bottleneck(hidden) if bottleneck is None else linear(hidden, bottleneck)
        return hidden

    def add_output_kernels(self, kernels):
        if self.tie_embeddings and self.output_bottleneck is not None:
            kernels.add("output_bottleneck", self.output_bottleneck.kernel)

    @property
    def vocabulary_projection(self):
        return self.output_projection

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "attention": self.attention_type,
                "attention_units": self.attention_units,
                "attention_rank": self.attention_rank,
                "decoder_layers": self.decoder_layers,
                "input_feeding": self.input_feeding,
                "tie_embeddings": self.tie_embeddings,
            }
        )
        return config


class TiedProjection(keras.layers.Layer):
    """`x E^T + b`: a vocabulary projection whose kernel is an `Embedding`'s matrix transposed.

    Only the bias `(V,)` is this layer's own weight; `kernel` `(E, V)` is read from the
    embedding at every use, so both share one matrix (and its gradients add up). It has the
    `kernel`/`bias` of a `Dense` that `Seq2Seq.restrict_output` takes columns of.
    """

    def __init__(self, embedding, **kwargs):
        super().__init__(**kwargs)
        self.vocabulary_size = embedding.input_dim
        self._matrix = lambda: embedding.embeddings  # a function: the model tracks the embedding, not this layer

    def build(self, input_shape):
        self.bias = self.add_weight(shape=(self.vocabulary_size,), initializer="zeros", name="bias")

    @property
    def kernel(self):
        return ops.transpose(self._matrix())

    def columns(self, ids):
        """`kernel`'s columns `ids (M,)`, `(E, M)`: rows of the embedding (a sparse gradient), then transposed."""
        return ops.transpose(ops.take(self._matrix(), ids, axis=0))

    def call(self, inputs):
        kernel = ops.cast(self.kernel, self.compute_dtype)
        return linear(inputs, kernel) + ops.cast(self.bias, self.compute_dtype)
