"""Finished sentences leave the decoding loop's batch ("batch compaction").

Sentences of a batch finish at different steps, but a loop over the whole batch keeps
running the model on every row until the last one is done: about a third of the row-steps
of a length-sorted test set go to finished sentences. So once a quarter of the rows still in
the loop are done, the loop drops them: their search state is parked in a full-batch copy
of it (where `finish` reads every sentence at the end) and every per-sentence tensor (the
decoder state, the encoder memory, the search state, the limits) is gathered down to the
live rows. A sentence's result does not change: no step ever mixes sentences.

Shapes then change during the loop, which XLA cannot compile: under `jit_compile=True` the
loop runs over the whole batch as before.
"""

from typing import Any, NamedTuple

import tensorflow as tf

try:  # no public API says whether a graph is being compiled by XLA
    from tensorflow.python.ops.control_flow_util import GraphOrParentsInXlaContext as _in_xla
except ImportError:  # pragma: no cover
    def _in_xla(graph):
        return True  # then never compact: the loop is correct either way

COMPACT_FRACTION = 4  # drop the done rows once they are at least 1/4 of the rows in the loop


class Rows(NamedTuple):
    """The per-sentence inputs of the rows still in the loop, each with leading dim A (rows).

    Fields:
        index: int32 `(A,)`: each row's position in the batch.
        source_ids, source_mask, limits, memory: as in `SearchInputs`.
        allowed: bool `(A, M)`: the shortlisted ids each row may produce, or `()` for all.
    """

    index: tf.Tensor
    source_ids: tf.Tensor
    source_mask: tf.Tensor
    limits: tf.Tensor
    memory: Any
    allowed: Any


def check_compact(compact):
    """`decode`'s `compact` flag must be a Python bool."""
    if not isinstance(compact, bool):
        raise ValueError(f"compact must be True or False, received {compact!r}.")


def compacting(compact):
    """Whether the loop being traced compacts: asked for, and not inside an XLA compilation."""
    return compact and not _in_xla(tf.compat.v1.get_default_graph())


def gather_rows(tree, axes, index):
    """`tree` with the rows `index` int32 `(R,)` of each tensor along its batch axis in `axes`
    (the same structure: an int, or None for a tensor that is not per sentence)."""
    return tf.nest.map_structure(lambda s, a: s if a is None else tf.gather(s, index, axis=a), tree, axes)


def scatter_rows(full, axes, index, rows):
    """`full` with its batch rows `index` int32 `(R,)` replaced by `rows` (batch axis 0 or 1, see
    `gather_rows`)."""

    def scatter(whole, axis, part):
        if axis is None:
            return whole
        if axis == 0:
            return tf.tensor_scatter_nd_update(whole, index[:, None], part)
        # Axis 1 (a time-major history): the same scatter between transposes. Not with (t, row) index
        # pairs sized by `index`: after the loop Grappler's constant folding takes the loop's outputs
        # to have their initial shape when the batch size is static, and folds such sizes wrongly.
        perm = [1, 0, *range(2, len(whole.shape))]
        update = tf.tensor_scatter_nd_update(tf.transpose(whole, perm), index[:, None], tf.transpose(part, perm))
        return tf.transpose(update, perm)

    return tf.nest.map_structure(scatter, full, axes, rows)


def should_compact(done):
    """bool scalar: some rows are done, at least 1/COMPACT_FRACTION of them, and not all."""
    finished = tf.reduce_sum(tf.cast(done, tf.int32))
    rows = tf.size(done)
    return (finished * COMPACT_FRACTION >= rows) & (finished > 0) & (finished < rows)


def compact_rows(loop, rows, parked, axes):
    """Parks the done rows' search state and keeps the others: `(loop, rows, parked)` again.

    Args:
        loop: the `LoopState` after a step (its `done` says which rows go).
        rows: the `Rows` of the loop's rows; parked: the full-batch search state.
        axes: the batch axis of each tensor of the search state (`DecodingStrategy.batch_axes`).
    """
    gone = tf.reshape(tf.where(loop.done), [-1])
    stay = tf.reshape(tf.where(tf.logical_not(loop.done)), [-1])
    parked = scatter_rows(parked, axes, tf.gather(rows.index, gone), gather_rows(loop.search, axes, gone))
    tokens, decoder_state, done, rows = tf.nest.map_structure(
        lambda s: tf.gather(s, stay), (loop.tokens, loop.decoder_state, loop.done, rows))  # all batch-major
    search = gather_rows(loop.search, axes, stay)
    return loop._replace(tokens=tokens, decoder_state=decoder_state, done=done, search=search), rows, parked
