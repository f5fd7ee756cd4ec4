"""Small beam helpers: K hypotheses per sentence along axis 1, `(B, K, ...)`."""

from typing import NamedTuple

import tensorflow as tf

from zoo.data.vocabulary import PAD_ID
from zoo.decoding.history import write_row


def expand_beams(tree, beam):
    """Every tensor `(B, ...)` of `tree` as `(B, beam, ...)`, copied along the new beam axis."""
    if isinstance(beam, int) and beam == 1:
        return tf.nest.map_structure(lambda s: tf.expand_dims(s, 1), tree)
    return tf.nest.map_structure(lambda s: tf.repeat(tf.expand_dims(s, 1), beam, axis=1), tree)


def gather_beams(tree, indices):
    """Every tensor `(B, K, ...)` of `tree` reordered along the beam axis: `(B, K', ...)` for
    `indices` int32 `(B, K')` (each sentence picks among its own beams)."""
    return tf.nest.map_structure(lambda s: tf.gather(s, indices, batch_dims=1), tree)


class History(NamedTuple):
    """What each step wrote, time-major (T = buffer length): traced back once at the end.

    Fields:
        tokens: int32 `(T, B, K)`: the token of each live beam after step t.
        parents: int32 `(T, B, K)`: the beam at step t - 1 it extends.
        attention: float32 `(T, B, K, S)`: the step's attention, rows indexed by the parent beam
            (an empty `(0,)` when the search keeps no alignments).
    """

    tokens: tf.Tensor
    parents: tf.Tensor
    attention: tf.Tensor


class Finished(NamedTuple):
    """The N best finished hypotheses of each sentence so far, best first, all `(B, N)`.

    Fields:
        scores: float32 ranking score (-inf: no hypothesis yet).
        log_probs: float32 log-probability, end token included.
        last_step: int32 step of the last token.
        last_token: int32 last token (EOS_ID unless cut at the length limit).
        last_parent: int32 beam at the step before the last token.
    """

    scores: tf.Tensor
    log_probs: tf.Tensor
    last_step: tf.Tensor
    last_token: tf.Tensor
    last_parent: tf.Tensor


def trace_back(steps, history, finished):
    """Follows parent pointers from each finished hypothesis' last token back to the first.

    Args:
        steps: int32 scalar, the number of steps the search ran.
        history: a `History` of T rows (its `attention` of rank 1 when the search kept none).
        finished: a `Finished` of N hypotheses.

    Returns:
        `(ids, attention)`, time-major: int32 `(T, B, N)` and float32 `(T, B, N, S)`,
        PAD_ID and zero rows after each hypothesis' last token; `attention` is None when
        the history holds none.
    """
    shape = tf.shape(history.tokens)  # (T, B, K)
    hypotheses = tf.shape(finished.last_step)[1]
    aligned = history.attention.shape.rank == 4

    def keep_going(t, *unused):
        return t >= 0

    def one_step(t, beam, ids, *attention):
        at_last = tf.equal(t, finished.last_step)
        inside = t <= finished.last_step
        parent = tf.where(at_last, finished.last_parent, tf.gather(history.parents[t], beam, batch_dims=1))
        token = tf.where(at_last, finished.last_token, tf.gather(history.tokens[t], beam, batch_dims=1))
        token = tf.where(inside, token, PAD_ID)
        if aligned:
            weights = tf.gather(history.attention[t], parent, batch_dims=1)  # (B, N, S)
            weights = tf.where(tf.expand_dims(inside, 2), weights, 0.0)
            attention = (write_row(attention[0], t, weights),)
        beam = tf.where(inside, parent, beam)
        return (t - 1, beam, write_row(ids, t, token), *attention)

    start = [steps - 1, tf.zeros([shape[1], hypotheses], tf.int32),
             tf.zeros([shape[0], shape[1], hypotheses], tf.int32)]
    invariants = [tf.TensorShape([]), tf.TensorShape([None, None]), tf.TensorShape([None] * 3)]
    if aligned:
        start.append(tf.zeros([shape[0], shape[1], hypotheses, tf.shape(history.attention)[3]], tf.float32))
        invariants.append(tf.TensorShape([None] * 4))
    final = tf.while_loop(keep_going, one_step, tuple(start), shape_invariants=tuple(invariants))
    return final[2], (final[3] if aligned else None)


def merge_finished(kept, *candidates, hypotheses=None):
    """The N best of the `Finished` records `kept` and `candidates` (`(B, N)`, `(B, M_i)`).

    Kept ones come first, so that they win ties; a -inf score is no hypothesis. `hypotheses`: N when
    the caller knows it as a Python int (N = 1 then takes an argmax, the same pick as a top-1).
    """
    merged = tf.nest.map_structure(lambda *parts: tf.concat(parts, axis=1), kept, *candidates)
    if isinstance(hypotheses, int) and hypotheses == 1:  # the first of the highest scores, as top_k ranks ties
        pick = tf.argmax(merged.scores, axis=1, output_type=tf.int32)[:, None]
    else:
        _, pick = tf.math.top_k(merged.scores, k=tf.shape(kept.scores)[1])
    return gather_beams(merged, pick)
