"""Vocabulary selection: the target tokens a sentence's translation may use, learned from training pairs.

A shortlist restricts the output layer at decoding to a few thousand likely target tokens
instead of the whole vocabulary (Jean et al., 2015, section 3.2; L'Hostis et al., 2016):

- the `frequent` most frequent target tokens of the training data and the reserved ids,
  allowed in every sentence (`ShortlistTable.always`);
- for each source token, the `k` target tokens that co-occur with it in most training pairs
  (counted once per pair: the ranking of p(t | s) estimated from sentence-level
  co-occurrences), among those not already always allowed (`ShortlistTable.rows`).

A sentence may produce the union of the always-allowed ids and the rows of its source tokens.
Learning is NumPy (`learn_shortlist` on token ids, `learn_shortlist_from_texts` on text pairs
with the tokenizers); `zoo.decoding.Shortlist` runs a table in the graph. A workdir keeps its
table in `vocab/shortlist.npz` (`zoo.constants.SHORTLIST_FILE`).
"""

import dataclasses
import numbers

import numpy as np

from zoo.atomic_write import atomic_write
from zoo.constants import EOS_ID, FIRST_REGULAR_ID, PAD_ID

_CHUNK = 4096  # training pairs counted at once: bounds the memory of the co-occurrence keys


@dataclasses.dataclass(frozen=True)
class ShortlistTable:
    """A learned vocabulary selection table.

    Attributes:
      rows: int32 `(source_vocab_size, k)`: for each source id, its k target ids, best first,
        padded with EOS_ID (always allowed) when fewer target tokens co-occur with it.
      always: int32 `(A,)`, sorted: the reserved ids and the `frequent` most frequent target ids.
      target_vocab_size: V, the size of the target vocabulary.
      frequent: how many frequent target ids `always` was given.
    """

    rows: np.ndarray
    always: np.ndarray
    target_vocab_size: int
    frequent: int

    @property
    def k(self):
        return int(self.rows.shape[1])

    @property
    def source_vocab_size(self):
        return int(self.rows.shape[0])

    def settings(self):
        """`{"k", "frequent"}`: what the table was learned with (zoo_export.json records it)."""
        return {"k": self.k, "frequent": self.frequent}

    def allowed(self, source_ids):
        """Sorted int32 target ids a sentence of source ids (a sequence, padding ignored) may produce."""
        source_ids = np.asarray(source_ids, np.int64).ravel()
        return np.union1d(self.always, self.rows[source_ids[source_ids != PAD_ID]].ravel()).astype(np.int32)

    def save(self, path):
        """Writes the table as `.npz` (replaced atomically)."""
        with atomic_write(path, "wb") as f:
            np.savez(f, rows=self.rows, always=self.always, target_vocab_size=self.target_vocab_size,
                     frequent=self.frequent)

    @classmethod
    def load(cls, path):
        """Reads a table written by `save`.

        Raises:
          ValueError: the file is not a shortlist table (the message names it).
        """
        with np.load(path) as data:
            try:
                return cls(rows=data["rows"].astype(np.int32), always=data["always"].astype(np.int32),
                           target_vocab_size=int(data["target_vocab_size"]), frequent=int(data["frequent"]))
            except KeyError as error:
                raise ValueError(f"{path}: not a shortlist table (no {error} array)") from None


def learn_shortlist(pairs, source_vocab_size, target_vocab_size, k, frequent):
    """Learns a `ShortlistTable` from training pairs of token ids.

    Args:
      pairs: iterable of `(source_ids, target_ids)` int sequences, as the tokenizers encode
        them (no BOS/EOS).
      source_vocab_size, target_vocab_size: the vocabulary sizes, reserved ids included.
      k: target ids per source id (>= 1).
      frequent: most frequent target ids allowed in every sentence (>= 0).

    Returns:
      A `ShortlistTable`. Ties go to the lower target id, in `always` and in each row.
    """
    integers = all(isinstance(n, numbers.Integral) and not isinstance(n, bool) for n in (k, frequent))
    if not integers or k < 1 or frequent < 0:  # k=1.5 failed in numpy's np.full with no name
        raise ValueError(f"learn_shortlist: expected integers k >= 1 and frequent >= 0, received k={k!r}, "
                         f"frequent={frequent!r}")
    keys, counts, token_counts = _cooccurrences(pairs, target_vocab_size)
    by_frequency = np.lexsort((np.arange(target_vocab_size), -token_counts))
    regular = by_frequency[by_frequency >= FIRST_REGULAR_ID][:frequent]
    always = np.union1d(np.arange(FIRST_REGULAR_ID), regular).astype(np.int32)
    is_always = np.zeros(target_vocab_size, bool)
    is_always[always] = True

    source, target = keys // target_vocab_size, keys % target_vocab_size
    keep = ~is_always[target]
    source, target, counts = source[keep], target[keep], counts[keep]
    order = np.lexsort((target, -counts, source))  # by source, then count descending, then id
    source, target = source[order], target[order]
    rank = np.arange(source.size) - np.searchsorted(source, source, side="left")
    chosen = rank < k
    rows = np.full((source_vocab_size, k), EOS_ID, np.int32)
    rows[source[chosen], rank[chosen]] = target[chosen]
    return ShortlistTable(rows=rows, always=always, target_vocab_size=int(target_vocab_size), frequent=int(frequent))


def _cooccurrences(pairs, target_vocab_size):
    """`(keys, counts, token_counts)`: each co-occurring (source, target) pair as the key
    `source * V + target` (sorted, int64) with the number of training pairs holding both, and
    each target id's number of occurrences."""
    parts, token_counts, chunk = [], np.zeros(target_vocab_size, np.int64), []

    def count(chunk):
        keys = np.concatenate([
            (np.unique(source).astype(np.int64)[:, None] * target_vocab_size + np.unique(target)[None, :]).ravel()
            for source, target in chunk
        ])
        parts.append(np.unique(keys, return_counts=True))

    for source, target in pairs:
        source, target = np.asarray(source, np.int64), np.asarray(target, np.int64)
        token_counts += np.bincount(target, minlength=target_vocab_size)
        chunk.append((source, target))
        if len(chunk) == _CHUNK:
            count(chunk)
            chunk = []
    if chunk:
        count(chunk)
    if not parts:
        return np.zeros([0], np.int64), np.zeros([0], np.int64), token_counts
    keys, where = np.unique(np.concatenate([keys for keys, _ in parts]), return_inverse=True)
    counts = np.bincount(where, weights=np.concatenate([c for _, c in parts])).astype(np.int64)
    return keys, counts, token_counts


def learn_shortlist_from_texts(pairs, source_tokenizer, target_tokenizer, k, frequent, batch_size=2048):
    """`learn_shortlist` on `(source, target)` text pairs, encoded with the tokenizers in batches."""

    def encoded():
        for start in range(0, len(pairs), batch_size):
            batch = pairs[start : start + batch_size]
            sources = source_tokenizer.encode([pair[0] for pair in batch]).to_list()
            targets = target_tokenizer.encode([pair[1] for pair in batch]).to_list()
            yield from zip(sources, targets)

    return learn_shortlist(encoded(), source_tokenizer.vocab_size, target_tokenizer.vocab_size, k, frequent)
