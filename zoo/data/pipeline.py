"""tf.data input pipeline: sentence pairs -> padded, length-bucketed batches of token ids.

Tokenization runs inside the pipeline with the tokenizers' own TF ops (the very ops the
exported model runs), so training and serving see identical tokens.
"""

import tensorflow as tf

from zoo.data import vocabulary
from zoo.data.static_batching import static_batches, static_bucket_lengths
from zoo.data.tsv import DataError

TOKENIZE_BATCH = 1024  # sentences tokenized per op call: amortizes the per-call overhead

# Static shapes: bucket edges grow by 25-50%, so that there are few shapes to compile (one
# XLA compilation each) while a batch pads little beyond its longest row.
_LENGTH_LADDER = (8, 12, 16, 20, 24, 32, 40, 48, 64, 80, 96, 128, 160, 192, 256, 320, 384, 512)
# Otherwise every shape runs the same traced step: edges 2 tokens apart up to 64 and 4 apart up
# to 128 pad less (Debian fr-en, text recipe: 8.8% of the batches' positions are padding
# instead of 16.8%), at the cost of a partial batch per bucket (2% more batches an epoch).
_FINE_LADDER = tuple(range(4, 64, 2)) + tuple(range(64, 128, 4)) + _LENGTH_LADDER[_LENGTH_LADDER.index(128):]


def make_dataset(
    pairs,
    source_tokenizer,
    target_tokenizer,
    batch_size=None,
    *,
    batch_tokens=None,
    max_source_length=None,
    max_target_length=None,
    shuffle=True,
    seed=0,
    bucket_boundaries=None,
    drop_long=False,
    repeat=False,
    shuffle_buffer_size=None,
    static_shapes=False,
):
    """Builds the training/evaluation dataset of a list of sentence pairs.

    Each element is `((source_ids, target_in_ids), target_out_ids)`, int32, padded with
    `PAD_ID` to the longest row of the batch:
      source_ids     `(B, S)`: the source tokens, no `<s>`/`</s>`;
      target_in_ids  `(B, T)`: `<s>` + target tokens (teacher forcing input);
      target_out_ids `(B, T)`: target tokens + `</s>` (what the loss compares with).
    Pairs are grouped by length (`max(S, T)`) so that batches carry little padding; a
    batch holds at most `batch_size` sentences, or with `batch_tokens` at most that many
    padded positions `B * max(S, T)` (the last batch of a bucket may be smaller). Pairs
    whose source or target has no token at all are left out. The number of real tokens of
    a batch is `count_tokens(ids)` (non-pad positions).

    Args:
      pairs: list of (source, target) str pairs, e.g. from `read_tsv` or `dates_splits`.
      source_tokenizer, target_tokenizer: `zoo.data.Tokenizer`s.
      batch_size: sentences per batch; give this or `batch_tokens`.
      batch_tokens: at most this many padded positions per batch, counted on the longer
        side: rows x `max(S, T)` (`T` counts `</s>`), each length bucket getting
        `batch_tokens // (its longest row)` rows. With targets at least as long as their
        sources (as in translation between similar languages) that is about this many
        target tokens a batch, padding included; fewer when sources are longer. Needs
        both maximum lengths.
      max_source_length: most source tokens kept; None for no limit.
      max_target_length: most target tokens kept (before `<s>`/`</s>` are added, so `T` is
        at most `max_target_length + 1`); None for no limit.
      shuffle: shuffle the pairs (again at each epoch).
      seed: shuffle seed; the same seed gives the same batches in the same order.
      bucket_boundaries: increasing lengths that separate buckets; None picks edges that
        grow by 25-50% up to the maximum lengths.
      drop_long: leave out pairs longer than the maximum lengths instead of truncating them
        (truncated targets still end with `</s>`).
      repeat: repeat forever (for `model.fit(..., steps_per_epoch=...)`).
      shuffle_buffer_size: None shuffles all pairs at once.
      static_shapes: one shape per bucket, so XLA compiles once per bucket: see
        `zoo.data.static_batching` (needs both maximum lengths).

    Returns:
      A `tf.data.Dataset`, prefetched.

    Raises:
      DataError: no pairs were given.
    """
    pairs = list(pairs)
    if not pairs:
        raise DataError("no sentence pairs to build a dataset from (empty training set?)")
    batching = Batching(batch_size, batch_tokens, max_source_length, max_target_length, bucket_boundaries,
                        static_shapes=static_shapes)
    sources = tf.constant([source for source, _ in pairs], dtype=tf.string)
    targets = tf.constant([target for _, target in pairs], dtype=tf.string)
    dataset = tf.data.Dataset.from_tensor_slices((sources, targets))
    dataset = tokenize_pairs(
        dataset, source_tokenizer, target_tokenizer,
        max_source_length=max_source_length, max_target_length=max_target_length, drop_long=drop_long,
    )
    # Tokenize once; later epochs reshuffle the cached ids.
    dataset = dataset.cache()
    if shuffle:
        dataset = dataset.shuffle(shuffle_buffer_size or len(pairs), seed=seed, reshuffle_each_iteration=True)
    if repeat:
        dataset = dataset.repeat()
    return batching.batch(dataset).prefetch(tf.data.AUTOTUNE)


def tokenize_pairs(
    dataset, source_tokenizer, target_tokenizer, *, max_source_length=None, max_target_length=None,
    drop_long=False, batched=False,
):  # fmt: skip
    """(source, target) tf.string elements -> unbatched `((source_ids, target_in_ids), target_out_ids)`.

    Rows are 1-D int32; see `make_dataset` for their layout and for the arguments. Pairs
    with an empty side, and with `drop_long` the pairs over a maximum length, are left out.
    `batched`: the elements are already batches of strings `(B,)` (tokenized as they are).
    """
    for name, value in (("max_source_length", max_source_length), ("max_target_length", max_target_length)):
        if value is not None and value < 1:
            raise ValueError(f"{name} must be >= 1 or None, got {value}")
    if drop_long and max_source_length is None and max_target_length is None:
        raise ValueError("drop_long=True needs max_source_length and/or max_target_length")

    def tokenize(sources, targets):
        # Whole batches of ragged ids: per-sentence ops would cost more than tokenizing.
        source_ids = source_tokenizer.encode(sources)
        target_ids = target_tokenizer.encode(targets)
        source_lengths, target_lengths = source_ids.row_lengths(), target_ids.row_lengths()
        keep = tf.logical_and(source_lengths > 0, target_lengths > 0)
        if drop_long:
            keep = tf.logical_and(keep, _fits(source_lengths, max_source_length))
            keep = tf.logical_and(keep, _fits(target_lengths, max_target_length))
        source_ids = tf.ragged.boolean_mask(source_ids, keep)
        target_ids = tf.ragged.boolean_mask(target_ids, keep)
        if max_source_length is not None:
            source_ids = source_ids[:, :max_source_length]
        if max_target_length is not None:
            target_ids = target_ids[:, :max_target_length]
        return _teacher_forcing(source_ids, target_ids)

    if not batched:
        dataset = dataset.batch(TOKENIZE_BATCH)
    dataset = dataset.map(tokenize, num_parallel_calls=tf.data.AUTOTUNE)
    dataset = dataset.unbatch()
    # Unbatched ragged rows are specced as 0-ragged-rank RaggedTensors, which padded_batch
    # refuses; passing them through a function turns them into plain 1-D tensors.
    return dataset.map(lambda inputs, target_out_ids: (inputs, target_out_ids))


class Batching:
    """Length-bucketed padded batches of a fixed sentence count or of about N tokens.

    Args:
      batch_size: sentences per batch, or None with `batch_tokens`.
      batch_tokens: most padded positions `B * max(S, T)` per batch, or None.
      max_source_length, max_target_length: as in `make_dataset`.
      bucket_boundaries: as in `make_dataset`.
      static_shapes: as in `make_dataset`.
    """

    def __init__(self, batch_size, batch_tokens, max_source_length, max_target_length, bucket_boundaries=None,
                 static_shapes=False):
        if (batch_size is None) == (batch_tokens is None):
            raise ValueError(
                f"give batch_size (sentences) or batch_tokens (tokens), exactly one; got "
                f"batch_size={batch_size}, batch_tokens={batch_tokens}"
            )
        if batch_size is not None and batch_size < 1:
            raise ValueError(f"batch_size must be >= 1 sentence, got {batch_size}")
        if bucket_boundaries is None:
            bucket_boundaries = default_bucket_boundaries(max_source_length, max_target_length, static_shapes)
        self.boundaries = list(bucket_boundaries)
        if any(b <= a for a, b in zip(self.boundaries, self.boundaries[1:])) or (
            self.boundaries and self.boundaries[0] < 1
        ):
            raise ValueError(f"bucket_boundaries must be positive and increasing, got {self.boundaries}")
        if batch_tokens is None:
            self.batch_sizes = [batch_size] * (len(self.boundaries) + 1)
        else:
            self.batch_sizes = token_batch_sizes(
                batch_tokens, self.boundaries, max_source_length, max_target_length
            )
        self.static_lengths = None
        if static_shapes:
            if max_source_length is None or max_target_length is None:
                raise ValueError("static_shapes=True needs max_source_length and max_target_length; "
                                 f"got {max_source_length} and {max_target_length}")
            self.static_lengths = static_bucket_lengths(max_source_length, max_target_length, self.boundaries)
            self.batch_sizes = [batch_size or batch_tokens // length for length in self.static_lengths]
            self.max_lengths = (max_source_length, max_target_length)

    def batch(self, dataset):
        """Unbatched `((source_ids, target_in_ids), target_out_ids)` rows -> padded batches."""
        if self.static_lengths:
            return static_batches(dataset, self.static_lengths, self.batch_sizes, *self.max_lengths)
        return dataset.bucket_by_sequence_length(
            element_length_func=_length,
            bucket_boundaries=self.boundaries,
            bucket_batch_sizes=self.batch_sizes,
            padding_values=((vocabulary.PAD_ID, vocabulary.PAD_ID), vocabulary.PAD_ID),
        )


def token_batch_sizes(batch_tokens, bucket_boundaries, max_source_length, max_target_length):
    """Sentences per batch of each length bucket so that `B * max(S, T) <= batch_tokens`.

    Bucket `i` holds rows of length `[boundaries[i-1], boundaries[i])`; the last one rows up
    to the longest possible, `max(max_source_length, max_target_length + 1)`.

    Returns:
      list of int, one per bucket (`len(bucket_boundaries) + 1`).
    """
    if max_source_length is None or max_target_length is None:
        raise ValueError(
            "batch_tokens needs max_source_length and max_target_length (the longest row sizes "
            f"the last bucket), got {max_source_length} and {max_target_length}"
        )
    longest = max(max_source_length, max_target_length + 1)  # + 1: </s>
    if batch_tokens < longest:
        raise ValueError(f"batch_tokens={batch_tokens} cannot hold the longest row ({longest} tokens)")
    uppers = [min(boundary - 1, longest) for boundary in bucket_boundaries] + [longest]
    return [batch_tokens // max(upper, 1) for upper in uppers]


def default_bucket_boundaries(max_source_length=None, max_target_length=None, static_shapes=False):
    """Bucket edges up to the longest possible row (all if unknown).

    2 tokens apart up to 64, 4 apart up to 128, then growing by 25-50%; with
    `static_shapes` (one compilation per bucket) growing by 25-50% from 8 on.
    """
    ladder = _LENGTH_LADDER if static_shapes else _FINE_LADDER
    if max_source_length is None or max_target_length is None:
        return list(ladder)
    longest = max(max_source_length, max_target_length + 1)  # + 1: <s> or </s>
    return [b for b in ladder if b <= longest]


def pass_statistics(dataset, rows=False):
    """`(batches, real tokens)` of one pass over a batched dataset, counted in the graph.

    Real tokens are the non-pad source and target (`target_out_ids`) tokens. The pass runs
    in the tf.data runtime (no Python per batch) and fills the pipeline's token cache.
    `rows`: also count the sentence pairs the batches hold, `(batches, real tokens, pairs)`.
    """

    def add(totals, batch):
        (source_ids, _), target_out_ids = batch
        return (totals[0] + 1, totals[1] + count_tokens(source_ids) + count_tokens(target_out_ids),
                totals[2] + tf.shape(target_out_ids, out_type=tf.int64)[0])

    counts = dataset.reduce(tuple(tf.constant(0, tf.int64) for _ in range(3)), add)
    return tuple(int(count) for count in counts[: 3 if rows else 2])


def count_tokens(ids):
    """Number of real (non-`PAD_ID`) tokens in a batch of ids, int64 scalar.

    For tokens/s: `count_tokens(target_out_ids)` counts target tokens, `</s>` included.
    """
    return tf.math.count_nonzero(tf.not_equal(ids, vocabulary.PAD_ID), dtype=tf.int64)


def _length(inputs, target_out_ids):
    return tf.maximum(tf.size(inputs[0]), tf.size(target_out_ids))


def _fits(lengths, max_length):
    if max_length is None:
        return tf.ones_like(lengths, dtype=tf.bool)
    return lengths <= max_length


def _teacher_forcing(source_ids, target_ids):
    """Ragged (x, y) `(B, None)` -> ((x, [BOS] + y), y + [EOS])."""
    batch = target_ids.nrows()
    bos = tf.fill([batch, 1], tf.constant(vocabulary.BOS_ID, tf.int32))
    eos = tf.fill([batch, 1], tf.constant(vocabulary.EOS_ID, tf.int32))
    target_in = tf.concat([bos, target_ids], axis=1)
    target_out = tf.concat([target_ids, eos], axis=1)
    return (source_ids, target_in), target_out
