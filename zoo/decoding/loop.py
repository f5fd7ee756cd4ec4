"""`decode`: the one decoding loop, shared setup and step plumbing for every strategy."""

from typing import Any, NamedTuple

import tensorflow as tf

from zoo.data.vocabulary import BOS_ID, PAD_ID
from zoo.decoding.arguments import checked_ids
from zoo.decoding.beams import expand_beams, gather_beams
from zoo.decoding.compaction import Rows, check_compact, compact_rows, compacting, scatter_rows, should_compact
from zoo.decoding.constraints import decoding_limits
from zoo.decoding.history import relaxed_shape
from zoo.decoding.shortlist import check_shortlist
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
        allowed: None, or bool `(B, M)` with a shortlist: the ids each sentence may produce
            (the loop gives the others a logit of -inf).
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
    allowed: Any = None

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
    check_shortlist(shortlist, model)
    if shortlist is not None and not hasattr(model, "restrict_output"):
        raise TypeError(f"a shortlist needs a model with restrict_output (a zoo Seq2Seq), received {model!r}.")
    source_ids = checked_ids(source_ids, "source_ids", getattr(model, "source_vocab_size", None))
    limits, buffer_length = decoding_limits(source_ids, max_length)
    memory, state = model.encode(source_ids)
    output_ids = output = allowed = None
    if shortlist is not None:
        output_ids, allowed = shortlist.select(source_ids)
        output = model.restrict_output(output_ids)
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
        allowed=allowed,
    )


def decode(model, source_ids, strategy, max_length=None, shortlist=None, compact=True):
    """Translates a batch with `strategy`: `zoo.decoding.Greedy()`, `BeamSearch(...)`, `Sampling(...)`.

    The batch is encoded once; then, until every sentence is done or the buffer is
    full, `model.step` scores the next token of each live hypothesis and the strategy
    chooses. A zoo model's step hands over its logits (`step(..., normalized=False)`),
    another model's its log-probabilities (logits too: their log-softmax is themselves);
    each strategy normalizes only what it reads (`zoo.decoding.log_softmax`). Finished
    sentences leave the loop's batch as they go (`compact`, see zoo/decoding/compaction.py).
    Works eagerly, in `tf.function` and under `jit_compile=True`.

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
        compact: True drops finished sentences from the loop's batch (the same results,
            fewer rows per step); False runs every row to the end. Under `jit_compile=True`
            the loop never compacts (XLA needs fixed shapes).

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
    check_compact(compact)
    inputs = prepare(model, source_ids, max_length, shortlist)
    width, compacts = strategy.width(), compacting(compact)
    start = LoopState(
        step=tf.constant(0),
        tokens=tf.fill([inputs.batch_size, width], BOS_ID),
        decoder_state=expand_beams(inputs.initial_state, width),
        done=tf.zeros([inputs.batch_size], tf.bool),
        search=strategy.start(inputs),
    )
    rows = Rows(
        index=tf.range(inputs.batch_size), source_ids=inputs.source_ids, source_mask=inputs.source_mask,
        limits=inputs.limits, memory=inputs.memory, allowed=() if inputs.allowed is None else inputs.allowed,
    )

    def keep_going(loop, *unused):
        return tf.logical_and(loop.step < inputs.buffer_length, tf.logical_not(tf.reduce_all(loop.done)))

    first_view = None if isinstance(width, int) and width == 1 else strategy.first_view(start.search)
    if first_view is not None:  # step 0 on one row per sentence: the K hypotheses are all the same there
        first = start._replace(tokens=tf.fill([inputs.batch_size, 1], BOS_ID),
                               decoder_state=expand_beams(inputs.initial_state, 1), search=first_view)
        start = tf.cond(keep_going(start), lambda: _step(model, strategy, inputs, first, rows), lambda: start)
    parked = start.search if compacts else ()  # the search state of every sentence that left the loop
    axes = strategy.batch_axes(start.search)

    def one_step(loop, rows, parked):
        loop = _step(model, strategy, inputs, loop, rows)
        if not compacts:
            return loop, rows, parked
        return tf.cond(should_compact(loop.done), lambda: compact_rows(loop, rows, parked, axes),
                       lambda: (loop, rows, parked))

    final, rows, parked = tf.while_loop(
        keep_going, one_step, (start, rows, parked), shape_invariants=_invariants(start, rows, parked, width))
    search = scatter_rows(parked, axes, rows.index, final.search) if compacts else final.search
    return strategy.finish(inputs, final.step, search)


def _step(model, strategy, inputs, loop, rows):
    """One step of the loop over the rows `rows`: the next `LoopState`."""
    inputs = inputs._replace(
        source_ids=rows.source_ids, source_mask=rows.source_mask, limits=rows.limits, memory=rows.memory,
        allowed=rows.allowed if inputs.allowed is not None else None,
    )
    restricted = {} if inputs.output is None else {"output": inputs.output}
    if inputs.allowed is not None:  # the live sentences' ids: the step adds -inf to the others' logits
        restricted["output"] = inputs.output._replace(allowed=inputs.allowed)
    if inputs.kernels is not None:
        restricted["kernels"] = inputs.kernels
    if inputs.output is not None:  # a zoo model: its logits, which each strategy normalizes as it needs
        restricted["normalized"] = False
    logits, decoder_state, attention = model.step(loop.tokens, loop.decoder_state, inputs.memory, **restricted)
    logits = tf.cast(logits, tf.float32)
    chosen = strategy.advance(inputs, loop, logits, tf.cast(attention, tf.float32))
    if chosen.parents is not None:
        decoder_state = gather_beams(decoder_state, chosen.parents)
    return LoopState(
        step=loop.step + 1, tokens=chosen.tokens, decoder_state=decoder_state, done=chosen.done, search=chosen.search,
    )


def _invariants(loop, rows, parked, width):
    """Shape invariants of the loop's variables: batch and hypothesis dims free (unless K is the
    Python int 1), the model state's and memory's feature dims fixed so that layers inside `step`
    can build."""
    fixed_width = isinstance(width, int) and width == 1

    def free(tree):
        return tf.nest.map_structure(lambda s: tf.TensorShape([None] * s.shape.rank), tree)

    loop = LoopState(
        step=tf.TensorShape([]),
        tokens=tf.TensorShape([None, 1 if fixed_width else None]),
        decoder_state=tf.nest.map_structure(
            lambda s: relaxed_shape(s, 1 if fixed_width else 2), loop.decoder_state
        ),
        done=tf.TensorShape([None]),
        search=free(loop.search),
    )
    rows = free(rows)._replace(memory=tf.nest.map_structure(lambda s: relaxed_shape(s, 1), rows.memory))
    return loop, rows, free(parked)
