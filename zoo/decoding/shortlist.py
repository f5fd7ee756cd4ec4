"""`Shortlist`: vocabulary selection in the graph, the output layer of a search restricted per batch."""

import numpy as np
import tensorflow as tf

from zoo.data.vocabulary import EOS_ID, PAD_ID
from zoo.decoding.extensions import BLOCK_SIZE


class Shortlist(tf.Module):
    """A `zoo.data.ShortlistTable` as variables, and the target ids a batch of sources may produce.

    Each sentence may produce the table's always-allowed ids and the rows of its own source
    tokens (`sentence_mask`); a search scores only the union of those of its batch, M ids
    sorted ascending, once per batch (`select`), and masks for each sentence the ids the
    union holds that its own sources do not bring. So a sentence's search is the one it has
    alone, in any batch, and with a table that allows every id it is the search over the
    whole vocabulary. A `tf.Module`: an export saves the table with the model's variables.

    Args:
      table: a `zoo.data.shortlist.ShortlistTable`.
      static_shapes: score `min(V, A + B * S * k)` ids, a number the batch's shape fixes
        (A always-allowed ids, B sentences of S tokens), instead of the M the batch needs:
        what XLA (`jit_compile=True`) compiles. The ids past M are masked in every sentence;
        the search is the same, only slower (a large batch scores the whole vocabulary).
      name: module name.

    Example:

        shortlist = Shortlist(ShortlistTable.load("runs/fr_en/vocab/shortlist.npz"))
        result = decode(model, source_ids, BeamSearch(5), shortlist=shortlist)
    """

    def __init__(self, table, static_shapes=False, name="shortlist"):
        if not all(hasattr(table, field) for field in ("rows", "always", "target_vocab_size", "frequent")):
            raise TypeError(f"Shortlist needs a zoo.data.ShortlistTable (e.g. ShortlistTable.load(path)), "
                            f"received {table!r}.")
        super().__init__(name=name)
        self.static_shapes = bool(static_shapes)
        always = np.zeros([table.target_vocab_size], bool)
        always[table.always] = True
        self.rows = tf.Variable(table.rows.astype(np.int32), trainable=False, name="rows")  # (V_src, k)
        self.always = tf.Variable(always, trainable=False, name="always")  # (V,)
        self.target_vocab_size = int(table.target_vocab_size)
        self.source_vocab_size = int(table.rows.shape[0])
        self.k = int(table.rows.shape[1])
        self.frequent = int(table.frequent)
        self.always_count = int(np.count_nonzero(always))  # A

    def settings(self):
        """What the table was learned with, as `zoo_export.json` records it."""
        return {"k": self.k, "frequent": self.frequent}

    def sentence_mask(self, source_ids):
        """bool `(B, V)`: the target ids each sentence of `source_ids` int `(B, S)` may produce.

        Padding brings nothing; an id beyond the table's source vocabulary is an error.
        """
        source_ids = tf.cast(source_ids, tf.int32)
        rows = tf.gather(self.rows, source_ids)  # (B, S, k)
        rows = tf.where(tf.not_equal(source_ids, PAD_ID)[:, :, None], rows, EOS_ID)  # EOS_ID: always allowed
        batch_size = tf.shape(source_ids)[0]
        sentence = tf.broadcast_to(tf.range(batch_size)[:, None, None], tf.shape(rows))
        indices = tf.reshape(tf.stack([sentence, rows], axis=-1), [-1, 2])
        hits = tf.scatter_nd(indices, tf.ones(tf.shape(indices)[:1], tf.int32), [batch_size, self.target_vocab_size])
        return tf.logical_or(hits > 0, self.always[None, :])

    def select(self, source_ids):
        """The batch's candidates: `(ids, allowed)`.

        Returns:
          `ids` int32 `(M,)`: the sorted target ids some sentence may produce (the always-allowed
          ones at least, also for an empty batch), then ids no sentence may produce up to a multiple of
          the top-k's block size (with `static_shapes`: up to the size the batch's shape fixes);
          `allowed` bool `(B, M)`: those each sentence may.
        """
        mask = self.sentence_mask(source_ids)
        union = tf.logical_or(tf.reduce_any(mask, axis=0), self.always)
        if self.static_shapes:
            size = tf.minimum(self.target_vocab_size, self.always_count + tf.size(source_ids) * self.k)
        else:  # a whole number of top-k blocks: a search step's top-k then reads its logits without a padded copy
            size = tf.minimum(self.target_vocab_size, -(-tf.math.count_nonzero(union, dtype=tf.int32) // BLOCK_SIZE)
                              * BLOCK_SIZE)
        # The union's ids first, in ascending order, then the others.
        ids = tf.argsort(tf.cast(tf.logical_not(union), tf.int32), stable=True)[:size]
        return ids, tf.gather(mask, ids, axis=1)


def check_shortlist(shortlist, model):
    """Raises a TypeError unless `shortlist` is None or a `Shortlist`, and a ValueError when its table was
    learned for other vocabularies than the model's (`source_vocab_size`, `target_vocab_size`)."""
    if shortlist is None:
        return
    if not isinstance(shortlist, Shortlist):
        raise TypeError(f"shortlist must be None or a zoo.decoding.Shortlist, received {shortlist!r}.")
    for side in ("source", "target"):
        expected = getattr(model, f"{side}_vocab_size", None)
        found = getattr(shortlist, f"{side}_vocab_size")
        if expected is not None and int(expected) != found:
            raise ValueError(f"shortlist: its table has a {side} vocabulary of {found} ids, the model {int(expected)} "
                             f"(a table learned for another model's vocabularies).")
