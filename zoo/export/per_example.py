"""Per-example decoding parameters of the export: a scalar or one value per sentence.

TF Serving's `--enable_batching` concatenates every input of the requests it merges along
dimension 0, so a parameter that should survive batching must be `(B,)`; a request that
sends one value for its whole batch sends a scalar (or a length-1 vector). `per_example`
turns either into `(B,)`. `beam_search_per_example` then searches every sentence with its
own beam width, hypothesis count and length penalty: one batched search per distinct
parameter triple, so a sentence's hypotheses are exactly those it gets when searched alone
with its parameters (a common batch, all rows alike, is one search).
"""

import tensorflow as tf

from zoo.decoding import beam_search
from zoo.decoding.constraints import decoding_limits
from zoo.decoding.result import DecodingResult


def per_example(value, batch_size, name):
    """A scalar, `(1,)` or `(B,)` parameter -> `(B,)`.

    Raises:
      tf.errors.InvalidArgumentError (at run time): any other number of values, or a rank above 1
        (a `(1, B)` matrix of B values too: what batching concatenates along dimension 0 is `(B,)`).
    """
    flat = tf.reshape(value, [-1])
    size = tf.size(flat)
    check = tf.debugging.Assert(
        tf.logical_or(tf.equal(size, 1), tf.equal(size, batch_size)) & (tf.rank(value) <= 1),
        [f"{name}: expected a scalar or one value per source sentence (a vector); sources, values, rank:",
         batch_size, size, tf.rank(value)],
    )
    with tf.control_dependencies([check]):
        return tf.broadcast_to(flat, [batch_size])


def _pad(tensor, axis, size, value):
    """Pads `tensor` along `axis` up to `size` with `value`."""
    paddings = tf.one_hot(axis, tf.rank(tensor), on_value=1, off_value=0, dtype=tf.int32)
    paddings = tf.stack([tf.zeros_like(paddings), paddings * (size - tf.shape(tensor)[axis])], axis=1)
    return tf.pad(tensor, paddings, constant_values=value)


def beam_search_per_example(
    model, source_ids, beam_width, num_hypotheses, length_penalty, coverage_penalty, empty_hypotheses=1,
    shortlist=None, stopping="exact", max_length=None,
):
    """Beam search with parameters per sentence.

    Args:
      source_ids: int32 `(B, S)`.
      beam_width, num_hypotheses: int32 `(B,)`, already clamped; length_penalty: float32
        `(B,)`, finite.
      coverage_penalty: a Python float, the same for every sentence.
      empty_hypotheses: int32 scalar, N of an empty batch (it has no rows to take N from).
      shortlist: None, or a `zoo.decoding.Shortlist` (per sentence: the same in any group).
      stopping: `zoo.decoding.BeamSearch`'s stopping rule, the same for every sentence.
      max_length: None, or the cap on every sentence's length limit (`zoo.decoding.decode`).

    Returns:
      A `DecodingResult` with N = max(num_hypotheses) and T = `min(2 * S + 10, max_length)`
      (the buffer length of a search of this batch). A sentence with fewer hypotheses than N has
      empty ones after its own (ids 0, length 0, score and log-probability -inf).
    """
    batch_size, source_length = tf.shape(source_ids)[0], tf.shape(source_ids)[1]
    most = tf.where(batch_size > 0, tf.reduce_max(tf.concat([num_hypotheses, [1]], axis=0)), empty_hypotheses)
    _, buffer_length = decoding_limits(source_ids, max_length)  # that of every group's search
    empty = DecodingResult(
        ids=tf.zeros([batch_size, most, buffer_length], tf.int32),
        lengths=tf.zeros([batch_size, most], tf.int32),
        scores=tf.fill([batch_size, most], float("-inf")),
        log_probs=tf.fill([batch_size, most], float("-inf")),
        attention=tf.zeros([batch_size, most, buffer_length, source_length]),
    )
    fills = DecodingResult(ids=0, lengths=0, scores=float("-inf"), log_probs=float("-inf"), attention=0.0)

    def search_group(row, found):
        same = (
            tf.equal(beam_width, beam_width[row])
            & tf.equal(num_hypotheses, num_hypotheses[row])
            & tf.equal(length_penalty, length_penalty[row])
        )
        rows = tf.where(same)[:, 0]
        result = beam_search(
            model,
            tf.gather(source_ids, rows),
            beam_width=beam_width[row],
            num_hypotheses=num_hypotheses[row],
            length_penalty=length_penalty[row],
            coverage_penalty=coverage_penalty,
            shortlist=shortlist,
            stopping=stopping,
            max_length=max_length,
        )
        updated = []
        for part, total, fill in zip(result, found, fills):
            part = _pad(part, 1, most, fill)
            if part.shape.rank > 2:
                part = _pad(part, 2, buffer_length, fill)
            updated.append(tf.tensor_scatter_nd_update(total, rows[:, None], part))
        return DecodingResult(*updated)

    def body(row, found):
        # A row searches its group once: the first row with its parameters does it.
        seen = (
            tf.equal(beam_width[:row], beam_width[row])
            & tf.equal(num_hypotheses[:row], num_hypotheses[row])
            & tf.equal(length_penalty[:row], length_penalty[row])
        )
        found = tf.cond(tf.reduce_any(seen), lambda: found, lambda: search_group(row, found))
        return row + 1, found

    _, found = tf.while_loop(lambda row, _: row < batch_size, body, (tf.constant(0), empty))
    return found
