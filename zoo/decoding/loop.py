"""`decode`: the one decoding loop, shared setup and step plumbing for every strategy."""

from typing import Any, NamedTuple

import tensorflow as tf

from zoo.data.vocabulary import BOS_ID, PAD_ID
from zoo.decoding.beams import expand_beams, gather_beams
from zoo.decoding.constraints import decoding_limits
from zoo.decoding.history import relaxed_shape
from zoo.decoding.strategy import DecodingStrategy


class SearchInputs(NamedTuple):
    """What every strategy starts from, computed once per batch.

    Fields:
        source_ids: int32 `(B, S)` padded with PAD_ID.
        source_mask: bool `(B, S)`, True at real tokens.
        limits: int32 `(B,)`: each sentence's most target tokens, end token included.
        buffer_length: int32 scalar T >= every limit: the length of the histories.
        memory: the model's per-sentence memory (never tiled per hypothesis).
        initial_state: the model's initial decoder state, leading dim B.
        output_ids: None when the model scores the whole vocabulary, else int32 `(M,)`:
            the sorted target ids of a shortlist, one per column of the log-probabilities.
        output: None, or the model's output layer restricted to `output_ids`
            (`model.restrict_output`; all of it when `output_ids` is None), passed to
            every `model.step`.
        kernels: None, or the model's `step_kernels()` (its kernels cast once), passed to
            every `model.step`.
    """

    source_ids: tf.Tensor
    source_mask: tf.Tensor
    limits: tf.Tensor
    buffer_length: tf.Tensor
    memory: Any
    initial_state: Any
    output_ids: Any = None
    output: Any = None
    kernels: Any = None

    @property
    def batch_size(self):
        return tf.shape(self.source_ids)[0]

    @property
    def source_length(self):
        return tf.shape(self.source_ids)[1]

    def token_ids(self, columns):
        """The target ids of columns (any shape) of the log-probabilities: themselves without a shortlist."""
        return columns if self.output_ids is None else tf.gather(self.output_ids, columns)


class LoopState(NamedTuple):
    """The variables of the decoding loop.

    Fields:
        step: int32 scalar t: tokens decoded so far.
        tokens: int32 `(B, K)`: the last token of each live hypothesis (BOS_ID at t = 0).
        decoder_state: the model's state, every tensor `(B, K, ...)`.
        done: bool `(B,)`: sentences whose search has ended.
        search: the strategy's own search state.
    """

    step: tf.Tensor
    tokens: tf.Tensor
    decoder_state: Any
    done: tf.Tensor
    search: Any


def prepare(model, source_ids, max_length=None, shortlist=None):
    """Encodes the batch and fixes its length limits: the `SearchInputs` of every strategy.

    Args:
        model: an object with `encode` and `step` (docs/interfaces.md), and
            `restrict_output` for a shortlist.
        source_ids: int `(B, S)` padded with PAD_ID.
        max_length: None or a positive int / int32 scalar tensor, see `decoding_limits`.
        shortlist: None, or a `zoo.decoding.Shortlist`: the output layer is restricted to
            the batch's candidate ids, once, here.
    """
    if shortlist is not None and not hasattr(model, "restrict_output"):
        raise TypeError(f"a shortlist needs a model with restrict_output (a zoo Seq2Seq), received {model!r}.")
    source_ids = tf.cast(source_ids, tf.int32)
    limits, buffer_length = decoding_limits(source_ids, max_length)
    memory, state = model.encode(source_ids)
    output_ids = output = None
    if shortlist is not None:
        output_ids, allowed = shortlist.select(source_ids)
        output = model.restrict_output(output_ids, allowed)
    elif hasattr(model, "restrict_output"):
        output = model.restrict_output(None)  # the whole projection, ready for every step
    return SearchInputs(
        source_ids=source_ids,
        source_mask=tf.not_equal(source_ids, PAD_ID),
        limits=limits,
        buffer_length=buffer_length,
        memory=memory,
        initial_state=state,
        output_ids=output_ids,
        output=output,
        kernels=model.step_kernels() if hasattr(model, "step_kernels") else None,
    )


def decode(model, source_ids, strategy, max_length=None, shortlist=None):
    """Translates a batch with `strategy`: `zoo.decoding.Greedy()`, `BeamSearch(...)`, `Sampling(...)`.

    The batch is encoded once; then, until every sentence is done or the buffer is
    full, `model.step` scores the next token of each live hypothesis and the strategy
    chooses. A zoo model's step hands over its logits (`step(..., normalized=False)`),
    another model's its log-probabilities (logits too: their log-softmax is themselves);
    each strategy normalizes only what it reads (`zoo.decoding.log_softmax`). Works
    eagerly, in `tf.function` and under `jit_compile=True`.

    Args:
        model: an object with `encode(source_ids) -> (memory, state)` and
            `step(token_ids (B, K), state (B, K, ...), memory) -> (log_probs (B, K, V),
            state, attention (B, K, S))` (docs/interfaces.md).
        source_ids: int `(B, S)` source token ids padded with PAD_ID.
        strategy: a `DecodingStrategy`.
        max_length: None or a positive int / int32 scalar tensor: the most target
            tokens, end token included: a cap on each sentence's `2 * source_length + 10`.
        shortlist: None for the whole target vocabulary, or a `zoo.decoding.Shortlist`:
            each sentence may then produce only its shortlisted ids, and its log-probabilities
            are normalized over them (the model needs `restrict_output`).

    Returns:
        A `DecodingResult`: `ids` int32 `(B, N, T)`, `lengths` `(B, N)`, `scores` `(B, N)`
        descending, `log_probs` `(B, N)`, `attention` `(B, N, T, S)`, where T is
        `min(2 * S + 10, max_length)` and N the strategy's hypotheses per sentence.

    Example:

        result = decode(model, source_ids, BeamSearch(beam_width=5))
        best = result.ids[:, 0, :]          # (B, T)
    """
    if not isinstance(strategy, DecodingStrategy):
        raise TypeError(
            f"strategy must be a zoo.decoding strategy such as Greedy() or BeamSearch(4), "
            f"received {strategy!r}."
        )
    inputs = prepare(model, source_ids, max_length, shortlist)
    width = strategy.width()
    start = LoopState(
        step=tf.constant(0),
        tokens=tf.fill([inputs.batch_size, width], BOS_ID),
        decoder_state=expand_beams(inputs.initial_state, width),
        done=tf.zeros([inputs.batch_size], tf.bool),
        search=strategy.start(inputs),
    )

    def keep_going(loop):
        return tf.logical_and(loop.step < inputs.buffer_length, tf.logical_not(tf.reduce_all(loop.done)))

    def one_step(loop):
        restricted = {} if inputs.output is None else {"output": inputs.output}
        if inputs.kernels is not None:
            restricted["kernels"] = inputs.kernels
        if inputs.output is not None:  # a zoo model: its logits, which each strategy normalizes as it needs
            restricted["normalized"] = False
        logits, decoder_state, attention = model.step(loop.tokens, loop.decoder_state, inputs.memory, **restricted)
        chosen = strategy.advance(inputs, loop, tf.cast(logits, tf.float32), tf.cast(attention, tf.float32))
        if chosen.parents is not None:
            decoder_state = gather_beams(decoder_state, chosen.parents)
        return (
            LoopState(
                step=loop.step + 1,
                tokens=chosen.tokens,
                decoder_state=decoder_state,
                done=chosen.done,
                search=chosen.search,
            ),
        )

    (final,) = tf.while_loop(keep_going, one_step, (start,), shape_invariants=(_invariants(start, width),))
    return strategy.finish(inputs, final.step, final.search)


def _invariants(loop, width):
    """Shape invariants of `loop`: batch and hypothesis dims free (unless K is the Python int 1),
    the model state's feature dims fixed so that layers inside `step` can build."""
    fixed_width = isinstance(width, int) and width == 1
    return LoopState(
        step=tf.TensorShape([]),
        tokens=tf.TensorShape([None, 1 if fixed_width else None]),
        decoder_state=tf.nest.map_structure(
            lambda s: relaxed_shape(s, 1 if fixed_width else 2), loop.decoder_state
        ),
        done=tf.TensorShape([None]),
        search=tf.nest.map_structure(lambda s: tf.TensorShape([None] * s.shape.rank), loop.search),
    )
