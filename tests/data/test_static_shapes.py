"""Static shapes: an epoch holds exactly one batch shape per length bucket, every batch full."""

import random

import numpy as np
import pytest

from zoo.data import CharTokenizer, vocabulary
from zoo.data.pipeline import default_bucket_boundaries, make_dataset, pass_statistics
from zoo.data.static_batching import static_bucket_lengths

BATCH = 4
MAX_SOURCE, MAX_TARGET = 24, 8  # the longest row: max(24, 8 + 1) = 24


@pytest.fixture(scope="module")
def pairs():
    rng = random.Random(5)
    word = lambda n: "".join(rng.choice("abcdef") for _ in range(n))  # noqa: E731
    return [(word(rng.randint(1, 30)), word(rng.randint(1, 12))) for _ in range(240)]


@pytest.fixture(scope="module")
def tokenizers(pairs):
    return CharTokenizer.build([s for s, _ in pairs]), CharTokenizer.build([t for _, t in pairs])


def _bucket(source, target, lengths):
    length = max(min(len(source), MAX_SOURCE), min(len(target), MAX_TARGET) + 1)
    return next(i for i, bucket_length in enumerate(lengths) if bucket_length >= length)


def test_an_epoch_has_one_shape_per_bucket_and_only_full_batches(pairs, tokenizers):
    lengths = static_bucket_lengths(MAX_SOURCE, MAX_TARGET, default_bucket_boundaries(MAX_SOURCE, MAX_TARGET, True))
    assert lengths == [8, 12, 16, 20, 24]
    per_bucket = np.bincount([_bucket(s, t, lengths) for s, t in pairs], minlength=len(lengths))
    assert per_bucket.min() >= BATCH  # every bucket fills at least one batch

    dataset = make_dataset(pairs, *tokenizers, BATCH, max_source_length=MAX_SOURCE, max_target_length=MAX_TARGET,
                           seed=1, static_shapes=True)
    assert [spec.shape.as_list() for spec in (*dataset.element_spec[0], dataset.element_spec[1])] == [[BATCH, None]] * 3
    shapes, batches, tokens = set(), 0, 0
    for (source, target_in), target_out in dataset:
        shapes.add((tuple(source.shape), tuple(target_in.shape), tuple(target_out.shape)))
        batches += 1
        tokens += int(np.sum(source.numpy() != vocabulary.PAD_ID) + np.sum(target_out.numpy() != vocabulary.PAD_ID))
    expected = {((BATCH, min(n, MAX_SOURCE)), (BATCH, min(n, MAX_TARGET + 1)), (BATCH, min(n, MAX_TARGET + 1)))
                for n in lengths}
    assert shapes == expected and len(shapes) == len(lengths)
    assert batches == int(np.sum(per_bucket // BATCH))  # each bucket's partial batch is dropped
    # The same seed's first pass, counted in the graph (later passes drop other remainders).
    again = make_dataset(pairs, *tokenizers, BATCH, max_source_length=MAX_SOURCE, max_target_length=MAX_TARGET,
                         seed=1, static_shapes=True)
    assert pass_statistics(again) == (batches, tokens)

    # Padding each batch to its own longest row gives many more shapes on the same data.
    dynamic = make_dataset(pairs, *tokenizers, BATCH, max_source_length=MAX_SOURCE, max_target_length=MAX_TARGET,
                           seed=1, bucket_boundaries=[9, 13, 17, 21])
    assert len({(tuple(x.shape), tuple(y.shape)) for (x, _), y in dynamic}) > 2 * len(lengths)


def test_rows_sit_in_their_bucket(pairs, tokenizers):
    lengths = static_bucket_lengths(MAX_SOURCE, MAX_TARGET, bucket_boundaries=[10, 18])
    assert lengths == [10, 18, 24]
    dataset = make_dataset(pairs, *tokenizers, BATCH, max_source_length=MAX_SOURCE, max_target_length=MAX_TARGET,
                           seed=2, bucket_boundaries=[10, 18], static_shapes=True)
    for (source, _), target_out in dataset:
        longest = max(np.sum(source.numpy() != 0, axis=1).max(), np.sum(target_out.numpy() != 0, axis=1).max())
        bucket = lengths.index(max(source.shape[1], target_out.shape[1]))
        real = np.maximum(np.sum(source.numpy() != 0, axis=1), np.sum(target_out.numpy() != 0, axis=1))
        assert longest <= lengths[bucket] and (bucket == 0 or real.min() > lengths[bucket - 1])


def test_static_shapes_need_both_maximum_lengths(pairs, tokenizers):
    with pytest.raises(ValueError, match="static_shapes=True needs max_source_length and max_target_length; "
                                         "got 24 and None"):
        make_dataset(pairs, *tokenizers, BATCH, max_source_length=MAX_SOURCE, static_shapes=True)
