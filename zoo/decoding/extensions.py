"""The 2K best one-token extensions of a sentence's K live hypotheses: one top-k per sentence.

A beam search step scores every token after each of a sentence's K live hypotheses: K rows
of V logits. It keeps the 2K best extensions of the sentence, by log-probability
`live + (x - logsumexp(row))`. Here they are found from block maxima, over the sentence's
K * V values at once:

- Each row is cut into blocks of `BLOCK_SIZE` columns. Each block's maximum, adjusted as
  its values are (the row's normalizer off, the beam's log-probability on), bounds the
  extensions in it.
- The 2K best extensions lie in the 2K blocks with the best adjusted maxima: a value
  outside them is beaten by the maxima of 2K other blocks. So one top-k over the
  sentence's `K * V / BLOCK_SIZE` maxima picks the blocks, and one over their
  `2K * BLOCK_SIZE` values the extensions.
- The blocks are read in index order (beam-major, then column), so ties go to the lower
  beam, then to the lower column, as in `tf.math.top_k` over the sentence's K * V
  log-probabilities.

PAD and BOS, which no hypothesis may produce, are left out of the maxima and of the
candidates. They sit in each row's first block: their ids are below `BLOCK_SIZE`, and a
shortlist's columns hold its ids in ascending order.

The normalizer comes from one fused softmax pass, read at the row maximum's column (see
zoo/decoding/log_softmax.py). Each extension's log-probability is `live + (x - normalizer)`,
the number a per-beam top-k gave before this module; only extensions whose float32 sums
round to the same value may now be ordered differently (by beam, then column, where the
per-beam top-k put the higher logit first): on the Debian test set one translation of 1000
changed, and its BLEU did not.
"""

from typing import NamedTuple

import tensorflow as tf

from zoo.data.vocabulary import BOS_ID, EOS_ID, PAD_ID
from zoo.decoding.constraints import is_forbidden
from zoo.decoding.log_softmax import log_normalizer_at

BLOCK_SIZE = 64  # columns per block: a row whose length it divides is read without a padded copy
NEG_INF = float("-inf")

if max(PAD_ID, BOS_ID) >= BLOCK_SIZE:  # pragma: no cover - a guard on the constants
    raise ImportError("PAD_ID and BOS_ID must lie in the first block of columns")


class Extensions(NamedTuple):
    """The 2K best one-token extensions of a sentence's live hypotheses, best first, all `(B, 2K)`."""

    log_probs: tf.Tensor
    parents: tf.Tensor
    tokens: tf.Tensor
    is_end: tf.Tensor


def best_extensions(step_logits, live_log_probs, beam, token_ids=None, one_row=False):
    """The 2K extensions with the highest log-probability (all have the same length).

    Args:
        step_logits: float `(B, K, V)`, or `(B, K, M)` over a shortlist's columns: the
            step's logits (log-probabilities up to a per-row constant, see `decode`);
        live_log_probs: float32 `(B, K)` (-inf: no live hypothesis); beam: K, a Python
            int or an int32 scalar tensor.
        token_ids: None when the columns are the target ids, else a function from columns
            to target ids (`SearchInputs.token_ids`; ascending).
        one_row: True when each sentence has one row (K rows of logits only from the second step on:
            `BeamSearch.first_view`): its blocks may then hold fewer than 2K columns, and -inf fills up.

    Returns:
        `Extensions`: log-probabilities float32, parents (the beam each extends), tokens
        (target ids) and `is_end`, `(B, 2K)`; extensions of no live hypothesis, or of a
        token no hypothesis may produce, have a log-probability of -inf.
    """
    width, batch_size = tf.shape(step_logits)[2], tf.shape(step_logits)[0]
    ids_of = (lambda columns: columns) if token_ids is None else token_ids

    def barred(columns):  # a forbidden token's column, or padding past the row's end
        return (columns >= width) | is_forbidden(ids_of(tf.minimum(columns, width - 1)))

    blocks, num_blocks = _blocks(step_logits, width)  # (B, K, NB, L)
    maxima = tf.reduce_max(blocks, axis=3)  # (B, K, NB)
    normalizer = _normalizer(step_logits, blocks, maxima)  # (B, K), float32
    first_barred = barred(tf.range(BLOCK_SIZE))  # (L,): PAD, BOS (and columns past a short row's end)
    first = tf.reduce_max(tf.where(first_barred, NEG_INF, blocks[:, :, 0]), axis=2)
    maxima = tf.concat([first[:, :, None], maxima[:, :, 1:]], axis=2)
    scored = live_log_probs[:, :, None] + (tf.cast(maxima, tf.float32) - normalizer[:, :, None])
    scored = tf.reshape(scored, [batch_size, -1])  # (B, K * NB), beam-major
    _, chosen = tf.math.top_k(scored, k=tf.minimum(2 * beam, tf.shape(scored)[1]))
    chosen = tf.sort(chosen, axis=1)  # index order, for the ties  (B, C)
    parents_of_blocks, block_of = chosen // num_blocks, chosen % num_blocks
    candidates = tf.gather(tf.reshape(blocks, [batch_size, -1, BLOCK_SIZE]), chosen, batch_dims=1)  # (B, C, L)
    live = tf.gather(live_log_probs, parents_of_blocks, batch_dims=1)[:, :, None]
    offset = tf.gather(normalizer, parents_of_blocks, batch_dims=1)[:, :, None]
    candidates = live + (tf.cast(candidates, tf.float32) - offset)
    # Barred columns lie in the first block (PAD, BOS) and, when L does not divide V, past the row's end in the
    # last: a mask of the (B, C) chosen blocks and the L columns of a block, not of every candidate's column.
    barred_here = tf.equal(block_of, 0)[:, :, None] & first_barred
    if step_logits.shape[-1] is None or step_logits.shape[-1] % BLOCK_SIZE:
        past_end = (num_blocks - 1) * BLOCK_SIZE + tf.range(BLOCK_SIZE) >= width
        barred_here |= tf.equal(block_of, num_blocks - 1)[:, :, None] & past_end
    candidates = tf.reshape(tf.where(barred_here, NEG_INF, candidates), [batch_size, -1])
    one_row = one_row and not (isinstance(beam, int) and 2 * beam <= BLOCK_SIZE)  # else a block holds 2K
    if one_row:
        shortfall = tf.maximum(2 * beam - tf.shape(candidates)[1], 0)
        candidates = tf.pad(candidates, [[0, 0], [0, shortfall]], constant_values=NEG_INF)
    log_probs, index = tf.math.top_k(candidates, k=2 * beam)  # (B, 2K), ties: lower index first
    slot = index // BLOCK_SIZE  # the chosen block each extension lies in
    if one_row:
        slot = tf.minimum(slot, tf.shape(chosen)[1] - 1)
    parents = tf.gather(parents_of_blocks, slot, batch_dims=1)
    columns = tf.gather(block_of, slot, batch_dims=1) * BLOCK_SIZE + index % BLOCK_SIZE
    tokens = ids_of(tf.minimum(columns, width - 1))  # a real token even at -inf
    return Extensions(log_probs=log_probs, parents=parents, tokens=tokens, is_end=tf.equal(tokens, EOS_ID))


def _blocks(logits, width):
    """`(blocks (B, K, NB, L), NB)`: each row cut into blocks of L = BLOCK_SIZE columns, the last one
    filled up with -inf (a copy of the rows only when L does not divide V)."""
    num_blocks = (width + BLOCK_SIZE - 1) // BLOCK_SIZE
    padding = num_blocks * BLOCK_SIZE - width
    if logits.shape[-1] is None or logits.shape[-1] % BLOCK_SIZE:
        lowest = tf.fill(tf.concat([tf.shape(logits)[:2], [padding]], 0), tf.constant(NEG_INF, logits.dtype))
        if logits.shape[-1] is None:
            logits = tf.cond(padding > 0, lambda: tf.concat([logits, lowest], 2), lambda: logits)
        else:
            logits = tf.concat([logits, lowest], 2)
    shape = tf.shape(logits)
    return tf.reshape(logits, [shape[0], shape[1], num_blocks, BLOCK_SIZE]), num_blocks


def _normalizer(logits, blocks, maxima):
    """float32 `(B, K)`: each row's `logsumexp`, as `max - log(softmax at the max)` (zoo/decoding/log_softmax.py),
    the max's column found from the block maxima."""
    best_block = tf.argmax(maxima, axis=2, output_type=tf.int32)  # (B, K): the lowest block of the max
    in_block = tf.argmax(tf.gather(blocks, best_block, batch_dims=2), axis=2, output_type=tf.int32)
    column = best_block * BLOCK_SIZE + in_block  # the lowest column of the row maximum
    return log_normalizer_at(logits, column)[:, :, 0]
