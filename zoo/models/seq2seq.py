"""The encoder-decoder base model: teacher forcing, `encode` and one decoder `step`."""

from typing import Any, NamedTuple

import keras
from keras import ops

from zoo.constants import FIRST_REGULAR_ID, PAD_ID
from zoo.layers.linear import linear
from zoo import model_defaults as defaults
from zoo.models.encoder import BidirectionalEncoder
from zoo.models.id_checks import checked_inputs
from zoo.models.listed_layers import with_listed_layers
from zoo.models.loop_kernels import LoopKernels, add_decoder_kernels, add_step_input_kernels, defers
from zoo.models.time_loop import scan


class RestrictedOutput(NamedTuple):
    """The vocabulary projection restricted to M target ids, for one batch (`Seq2Seq.restrict_output`).

    Fields: `kernel` `(D_out, M)` in the compute dtype, `bias` float32 `(M,)` (added to the float32 product: one pass
    fewer), the M ids' columns; `allowed` bool `(B, M)`: the ids each sentence may produce, or None for all of them.
    """

    kernel: Any
    bias: Any
    allowed: Any

    def logits(self, hidden):
        """float32 `(..., M)` of `hidden (..., D_out)`, -inf where `allowed` bars an id (`hidden` `(B, K, D_out)`)."""
        bias = self.bias if self.allowed is None else ops.where(
            ops.expand_dims(self.allowed, 1), self.bias, float("-inf"))  # (B, 1, M)
        return ops.cast(linear(hidden, self.kernel), "float32") + bias


class Seq2Seq(keras.Model):
    """Base class of the zoo's encoder-decoder models.

    Subclasses define the decoder through four hooks:
      - `make_decoder()`: create the decoder's layers.
      - `decoder_memory(outputs, mask, final_forward, final_backward)`: the
        per-sentence tensors the decoder reads at every step, and its initial state.
      - `recur(gates, state, memory, training, kernels)`: one recurrence for all K
        hypotheses, returning `(features, attention, state)`: the features the
        output layer reads `(B, K, D_feat)`, the attention weights `(B, K, S)` and
        the new state. `kernels`: None, or in teacher forcing the `LoopKernels` that
        `add_loop_kernels(kernels)` filled (kernels whose gradients are taken after the loop).
      - `output_hidden(features, embedded, training)`: what the vocabulary
        projection reads, from the features and the previous target embedding.
      - `vocabulary_projection`: the `Dense` layer of the vocabulary `(D_out, V)`;
        `output_logits` (computed outside the time loop during training) is it
        applied to `output_hidden`, and `restrict_output` takes columns of it.

    Defaults of every size: `zoo.model_defaults`.

    Args:
        source_vocab_size, target_vocab_size: vocabulary sizes, reserved ids included.
        embedding_dim: size of the source and target embeddings.
        encoder_cell: "lstm" or "gru".
        encoder_units: size of each encoder direction.
        encoder_layers: number of stacked bidirectional encoder layers.
        decoder_cell: "lstm" or "gru".
        decoder_units: size of the decoder RNN.
        dropout: dropout on embeddings, between encoder layers and before the
            output layer.
        encoder_implementation: "zoo" (the own cells in one XLA-compilable loop) or
            "keras" (Keras' LSTM/GRU layers, cuDNN on a GPU): see `BidirectionalEncoder`;
            `zoo.models.with_encoder_implementation` converts a built model.

    Call arguments:
        inputs: `(source_ids, target_in_ids)`, int32 `(B, S)` and `(B, T)`, padded
            with 0; `target_in_ids` starts with BOS (and sampled ids: `teacher_forcing`).
        training: bool.

    Returns:
        float32 logits `(B, T, V)` (teacher forcing), whatever the compute dtype.
    """

    fuses_step_gates = False  # True: with "step_gates" (`step_kernels`) `recur` gets `E y_{t-1}` as its `gates`

    def __init__(
        self, source_vocab_size, target_vocab_size, embedding_dim=defaults.EMBEDDING_DIM,
        encoder_cell=defaults.ENCODER_CELL, encoder_units=defaults.ENCODER_UNITS,
        encoder_layers=defaults.ENCODER_LAYERS, decoder_cell=defaults.DECODER_CELL,
        decoder_units=defaults.DECODER_UNITS, dropout=defaults.DROPOUT,
        encoder_implementation=defaults.ENCODER_IMPLEMENTATION, **kwargs,
    ):
        super().__init__(**kwargs)
        source_vocab_size, target_vocab_size, embedding_dim, decoder_units = (
            defaults.checked_size(type(self).__name__, field, value, least) for field, value, least in (
                ("source_vocab_size", source_vocab_size, FIRST_REGULAR_ID),
                ("target_vocab_size", target_vocab_size, FIRST_REGULAR_ID),
                ("embedding_dim", embedding_dim, 1),
                ("decoder_units", decoder_units, 1),
            ))
        if decoder_cell not in ("lstm", "gru"):
            raise ValueError(f"{type(self).__name__}: decoder_cell must be 'lstm' or 'gru', received {decoder_cell!r}.")
        self.source_vocab_size, self.target_vocab_size = source_vocab_size, target_vocab_size
        self.embedding_dim = embedding_dim
        self.encoder_cell = encoder_cell
        self.encoder_units = encoder_units
        self.encoder_layers = encoder_layers
        self.decoder_cell = decoder_cell
        self.decoder_units = decoder_units
        self.dropout = float(dropout)
        self.encoder_implementation = encoder_implementation

        self.source_embedding = keras.layers.Embedding(source_vocab_size, embedding_dim, name="source_embedding",
                                                       dtype=self.dtype_policy)
        self.target_embedding = keras.layers.Embedding(target_vocab_size, embedding_dim, name="target_embedding",
                                                       dtype=self.dtype_policy)
        self.encoder = BidirectionalEncoder(
            encoder_cell, encoder_units, encoder_layers, dropout=dropout, implementation=encoder_implementation,
            name="encoder", dtype=self.dtype_policy,
        )
        self.embedding_dropout = keras.layers.Dropout(self.dropout, dtype=self.dtype_policy)
        self.output_dropout = keras.layers.Dropout(self.dropout, dtype=self.dtype_policy)
        self.make_decoder()

    # -- hooks -----------------------------------------------------------------
    def make_decoder(self):
        raise NotImplementedError

    def decoder_memory(self, outputs, mask, final_forward, final_backward):
        raise NotImplementedError

    def recur(self, gates, state, memory, training=None, kernels=None):
        raise NotImplementedError

    def add_loop_kernels(self, kernels, extra_kernel=None):
        """Adds to `kernels` (a `LoopKernels`) kernels whose gradients are taken after the loop.

        Returns the names of those whose products `recur` adds to `gates` unchanged (it
        reads them with `kernels.use(name, step_inputs)`); others are added with
        `probe=True` (`recur` computes them with `kernels.product(name, step_inputs)`).
        `recur` gets `kernels` if any were added. By default none: `recur` reads its own weights.
        `extra_kernel`: None, or the `decoder_input_cell`'s `kernel_parts()[1]`, to add in its place.
        """
        return []

    def add_loop_memory(self, kernels, memory):
        """`memory` as teacher forcing's loop reads it; a subclass may add per-example tensors
        to `kernels` (`LoopKernels.add(..., per_example=True)`). Unchanged by default."""
        return memory

    def output_hidden(self, features, embedded, training=None, kernels=None):
        raise NotImplementedError

    @property
    def vocabulary_projection(self):
        raise NotImplementedError

    @property
    def decoder_input_cell(self):
        """The cell whose kernel takes the target embedding (hoisted out of the loop)."""
        raise NotImplementedError

    # -- the shared machinery --------------------------------------------------
    @property
    def memory_dim(self):
        return 2 * self.encoder_units

    def _trackable_children(self, save_type="checkpoint", **kwargs):
        return with_listed_layers(self, super()._trackable_children(save_type, **kwargs), save_type)

    def build(self, input_shape=None):
        # Run one tiny teacher-forced batch so that every weight exists.
        source = ops.ones((1, 2), dtype="int32")
        target = ops.ones((1, 2), dtype="int32")
        self.call((source, target))
        self.built = True

    def encode(self, source_ids, training=None):
        """Encodes a batch once per sentence.

        Args:
            source_ids: int32 `(B, S)`, padded with 0.

        Returns:
            `(memory, state)`: `memory` a dict of per-sentence tensors `(B, ...)`,
            never tiled per hypothesis; `state` a tuple of tensors `(B, ...)`, the
            initial decoder state.
        """
        source_ids = ops.cast(source_ids, "int32")
        mask = ops.not_equal(source_ids, PAD_ID)  # (B, S)
        embedded = self.embedding_dropout(self.source_embedding(source_ids), training=training)
        outputs, final_forward, final_backward = self.encoder(embedded, mask=mask, training=training)
        return self.decoder_memory(outputs, mask, final_forward, final_backward)

    def call(self, inputs, training=None):
        return self.teacher_forcing(inputs, training=training)[0]

    def teacher_forcing(self, inputs, training=None):
        """Decodes the reference: every step reads the previous reference token.

        Args:
            inputs: `(source_ids, target_in_ids)`, int32 `(B, S)` and `(B, T)`; and M target ids `(B, M)`,
                all rows the same, to get the logits of those only (`zoo.training.sampled_vocabulary`).
            training: bool.

        Returns:
            `(logits, attention)`: float32 `(B, T, V)` (or `(B, T, M)`) and float32 `(B, T, S)`, the
            attention weights of every step (zeros for a model without attention).
        """
        source_ids, target_in_ids, *sampled = checked_inputs(self, inputs)  # concrete ids: checked
        memory, state = self.encode(source_ids, training=training)
        embedded = self.embedding_dropout(self.target_embedding(ops.cast(target_in_ids, "int32")), training=training)
        input_kernel, extra_kernel = self.decoder_input_cell.kernel_parts()  # one split: one concatenation back
        time_major, input_kernel = ops.transpose(embedded, (1, 0, 2)), ops.cast(input_kernel, self.compute_dtype)
        state = tuple(ops.expand_dims(s, 1) for s in state)  # (B, 1, ...): one hypothesis per sentence
        kernels = LoopKernels(self.compute_dtype, deferred=defers(training))
        routed = add_decoder_kernels(self, kernels, extra_kernel)
        memory = self.add_loop_memory(kernels, memory)
        gates = kernels.route(self.decoder_input_cell.project_inputs(time_major, input_kernel), routed)  # (T,B,G)
        probes = kernels.probes((*ops.shape(gates)[:2], 1))  # {name: (T, B, 1, G)}

        def body(state, step):  # step: gates_t (B, G), {name: probe_t (B, 1, G)}
            gates_t, probes_t = step
            kernels.start_step(probes_t)
            features, attention, state = self.recur(ops.expand_dims(gates_t, 1), state, memory, training=training,
                                                    kernels=kernels if kernels.names else None)
            # (B, D_feat), (B, S), and the inputs of the kernels of `kernels` (B, 1, D)
            return state, (ops.squeeze(features, 1), ops.squeeze(attention, 1), kernels.recorded())

        _, (features, attention, inputs) = scan(body, state, (gates, probes))  # (T, B, ...)
        kernels.set_inputs(inputs)
        features = ops.transpose(features, (1, 0, 2))  # (B, T, D_feat)
        attention = ops.cast(ops.transpose(attention, (1, 0, 2)), "float32")  # (B, T, S)
        if sampled:  # float32 logits, as below: the loss' log-softmax must not run in half precision
            return self.restrict_output(sampled[0][0]).logits(self.output_hidden(features, embedded, training)), attention
        return ops.cast(self.output_logits(features, embedded, training=training), "float32"), attention

    def output_logits(self, features, embedded, training=None):
        """Logits `(..., V)` of the features `(..., D_feat)` and previous target embeddings `(..., E)`."""
        return self.vocabulary_projection(self.output_hidden(features, embedded, training=training))

    def restrict_output(self, ids, allowed=None):
        """The output layer over the target ids `ids` int32 `(M,)` only, for `step(..., output=)`.

        Gathers the projection's M columns once per batch (not once per step), the kernel in the compute dtype.
        `ids=None`: every column, in order (the whole vocabulary, its kernel cast, and for a tied projection
        transposed, once per batch). `allowed`, bool `(B, M)` or None, says which of the M ids each sentence
        may produce: the others get a log-probability of -inf.
        """
        projection = self.vocabulary_projection  # a tied one gathers rows of its embedding: `columns`
        columns = getattr(projection, "columns", lambda ids: ops.take(projection.kernel, ids, axis=-1))
        kernel, bias = (projection.kernel, projection.bias) if ids is None else (
            columns(ids), ops.take(projection.bias, ids, axis=-1))
        return RestrictedOutput(ops.cast(kernel, self.compute_dtype), ops.cast(bias, "float32"), allowed)

    def step_kernels(self):
        """The decoder's kernels cast once for a decoding loop's steps (`step(..., kernels=)`): `add_loop_kernels`',
        the first cell's (`add_step_input_kernels`: with "step_gates" `step` hands `recur` the embedded `E y_{t-1}`
        as `gates`, for one product with the rest), `add_output_kernels`'."""
        kernels = LoopKernels(self.compute_dtype, deferred=False)
        self.add_loop_kernels(kernels)
        add_step_input_kernels(self, kernels)
        self.add_output_kernels(kernels)
        return kernels

    def add_output_kernels(self, kernels):
        """Adds to `kernels` (a decoding loop's `LoopKernels`) the weights `output_hidden(..., kernels=)`
        reads; none by default."""

    def step(self, token_ids, state, memory, output=None, kernels=None, normalized=True):
        """One decoder step for K hypotheses per sentence.

        Args:
            token_ids: int32 `(B, K)`, the previous target tokens.
            state: tuple of tensors `(B, K, ...)`.
            memory: the dict returned by `encode`, `(B, ...)`.
            output: None for the whole vocabulary, or a `RestrictedOutput` of M target ids
                (`restrict_output`): the log-softmax then runs over them only.
            kernels: None, or `step_kernels()` made once before the loop.
            normalized: False: the float32 logits instead of their log-softmax.

        Returns:
            `(log_probs, state, attention)`: float32 `(B, K, V)` log-softmax (`(B, K, M)`
            with `output`; the logits if not `normalized`), the new state `(B, K, ...)`,
            float32 attention weights `(B, K, S)`.
        """
        # The rows of the embedding, then cast (the layer would cast its whole table at every step).
        table = self.target_embedding.embeddings
        embedded = ops.cast(ops.take(table, ops.cast(token_ids, "int32"), axis=0), self.compute_dtype)  # (B, K, E)
        fused = kernels is not None and "step_gates" in kernels.names  # recur multiplies E y_{t-1} itself
        gates = embedded if fused else self.decoder_input_cell.project_inputs(
            embedded, kernels and kernels.use("input_kernel", None), kernels and kernels.use("input_bias", None))
        features, attention, state = self.recur(gates, state, memory, training=False, kernels=kernels)
        if output is None:
            logits = ops.cast(self.output_logits(features, embedded, training=False), "float32")  # (B, K, V)
        else:
            logits = output.logits(self.output_hidden(features, embedded, training=False, kernels=kernels))  # (B, K, M)
        scores = ops.log_softmax(logits, axis=-1) if normalized else logits
        return scores, state, ops.cast(attention, "float32")

    def get_config(self):
        fields = ("source_vocab_size", "target_vocab_size", "embedding_dim", "encoder_cell", "encoder_units",
                  "encoder_layers", "decoder_cell", "decoder_units", "dropout", "encoder_implementation")
        return {**super().get_config(), **{field: getattr(self, field) for field in fields}}

