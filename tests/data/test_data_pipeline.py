"""tf.data pipeline: shapes, padding, <s>/</s> placement, truncation, buckets, determinism."""

import numpy as np
import pytest
import tensorflow as tf

from zoo.data import (
    CharTokenizer,
    DataError,
    WordTokenizer,
    count_tokens,
    dates,
    default_bucket_boundaries,
    make_dataset,
    vocabulary,
)
from zoo.data.pipeline import pass_statistics, token_batch_sizes

PAD, BOS, EOS = vocabulary.PAD_ID, vocabulary.BOS_ID, vocabulary.EOS_ID
FEW_BUCKETS = [12, 20]  # fewer buckets than the default: quicker to build in tests


@pytest.fixture(scope="module")
def pairs():
    return dates.generate_dates(300, seed=11)


@pytest.fixture(scope="module")
def tokenizers(pairs):
    return (
        CharTokenizer.build([s for s, _ in pairs]),
        WordTokenizer.build([t for _, t in pairs]),
    )


def _batches(dataset):
    return [(x.numpy(), t_in.numpy(), t_out.numpy()) for (x, t_in), t_out in dataset]


def _rows(batch_array):
    """Each row without its padding, as a tuple."""
    return [tuple(int(v) for v in row[row != PAD]) for row in batch_array]


def test_element_spec_and_batch_sizes(pairs, tokenizers):
    dataset = make_dataset(pairs, *tokenizers, batch_size=16, seed=0)
    spec = dataset.element_spec
    assert spec == (
        (tf.TensorSpec([None, None], tf.int32), tf.TensorSpec([None, None], tf.int32)),
        tf.TensorSpec([None, None], tf.int32),
    )
    batches = _batches(dataset)
    assert sum(len(x) for x, _, _ in batches) == len(pairs)
    assert max(len(x) for x, _, _ in batches) == 16
    for x, t_in, t_out in batches:
        assert x.dtype == np.int32 and len(x) == len(t_in) == len(t_out)
        assert t_in.shape == t_out.shape


def test_bos_eos_placement_and_padding(pairs, tokenizers):
    dataset = make_dataset(pairs, *tokenizers, batch_size=32, seed=0, bucket_boundaries=FEW_BUCKETS)
    for x, t_in, t_out in _batches(dataset):
        for row_in, row_out in zip(t_in, t_out):
            n = int(np.sum(row_out != PAD))
            assert row_in[0] == BOS and row_out[n - 1] == EOS
            np.testing.assert_array_equal(row_in[1:n], row_out[: n - 1])
            assert not np.any(row_in[n:]) and not np.any(row_out[n:])  # padding is 0 after
            assert EOS not in row_in and BOS not in row_out
        for row in x:
            n = int(np.sum(row != PAD))
            assert not np.any(row[n:]) and BOS not in row and EOS not in row
        # Some row fills the batch width: padding is to the longest row, not further.
        assert np.any(x[:, -1] != PAD) and np.any(t_out[:, -1] != PAD)


def test_batches_decode_back_to_the_pairs(pairs, tokenizers):
    source_tok, target_tok = tokenizers
    decoded = []
    for (x, _), t_out in make_dataset(pairs, *tokenizers, batch_size=64, seed=3, bucket_boundaries=FEW_BUCKETS):
        decoded += zip(
            [s.decode() for s in source_tok.decode(x).numpy()],
            [t.decode() for t in target_tok.decode(t_out).numpy()],
        )
    assert sorted(decoded) == sorted(pairs)


def test_truncation_keeps_eos(pairs, tokenizers):
    dataset = make_dataset(
        pairs, *tokenizers, batch_size=32, max_source_length=6, max_target_length=3,
        bucket_boundaries=FEW_BUCKETS,
    )  # fmt: skip
    batches = _batches(dataset)
    assert sum(len(x) for x, _, _ in batches) == len(pairs)
    for x, t_in, t_out in batches:
        assert x.shape[1] <= 6 and t_in.shape[1] <= 4
        assert all(row[-1] == EOS for row in _rows(t_out))
        assert all(len(row) == 4 for row in _rows(t_out))  # every ISO date has 5 word tokens


def test_drop_long_leaves_out_long_pairs(pairs, tokenizers):
    source_tok, _ = tokenizers
    lengths = source_tok.encode(tf.constant([s for s, _ in pairs])).row_lengths().numpy()
    dataset = make_dataset(
        pairs, *tokenizers, batch_size=32, max_source_length=12, drop_long=True,
        bucket_boundaries=FEW_BUCKETS,
    )  # fmt: skip
    batches = _batches(dataset)
    assert sum(len(x) for x, _, _ in batches) == int(np.sum(lengths <= 12)) > 0
    assert all(x.shape[1] <= 12 for x, _, _ in batches)
    with pytest.raises(ValueError, match="drop_long=True needs"):
        make_dataset(pairs, *tokenizers, batch_size=4, drop_long=True)


def test_same_seed_same_batches_and_epochs_reshuffle(pairs, tokenizers):
    def flat(dataset):
        return [row for x, _, _ in _batches(dataset) for row in _rows(x)]

    first = make_dataset(pairs, *tokenizers, batch_size=16, seed=5, bucket_boundaries=FEW_BUCKETS)
    second = make_dataset(pairs, *tokenizers, batch_size=16, seed=5, bucket_boundaries=FEW_BUCKETS)
    other = make_dataset(pairs, *tokenizers, batch_size=16, seed=6, bucket_boundaries=FEW_BUCKETS)
    epoch_1 = flat(first)
    assert epoch_1 == flat(second)
    assert epoch_1 != flat(other)
    epoch_2 = flat(first)
    assert epoch_2 != epoch_1 and sorted(epoch_2) == sorted(epoch_1)


def test_rows_of_a_batch_share_a_length_bucket(pairs, tokenizers):
    dataset = make_dataset(pairs, *tokenizers, batch_size=8, bucket_boundaries=[16, 24])
    buckets = set()
    for x, _, t_out in _batches(dataset):
        lengths = np.maximum(np.sum(x != PAD, axis=1), np.sum(t_out != PAD, axis=1))
        batch_buckets = set(np.searchsorted([16, 24], lengths, side="right").tolist())
        assert len(batch_buckets) == 1, lengths
        buckets |= batch_buckets
    assert buckets == {0, 1, 2}


def test_repeat_runs_past_one_epoch(pairs, tokenizers):
    dataset = make_dataset(pairs, *tokenizers, batch_size=64, repeat=True, bucket_boundaries=FEW_BUCKETS)
    rows = sum(len(x) for (x, _), _ in dataset.take(12))
    assert rows > len(pairs)


def test_count_tokens_counts_non_pad():
    ids = tf.constant([[5, 6, EOS, PAD], [7, EOS, PAD, PAD]])
    assert int(count_tokens(ids)) == 5


def test_empty_inputs_are_refused_or_dropped(tokenizers):
    with pytest.raises(DataError, match="no sentence pairs"):
        make_dataset([], *tokenizers, batch_size=4)
    # A source made only of control characters tokenizes to nothing: the pair is left out.
    kept = make_dataset([("\x01\x02", "2021-01-01"), ("3/3/21", "2021-03-03")], *tokenizers, batch_size=4)
    assert [len(x) for (x, _), _ in kept] == [1]


def test_default_bucket_boundaries():
    assert default_bucket_boundaries(40, 15, static_shapes=True) == [8, 12, 16, 20, 24, 32, 40]
    assert default_bucket_boundaries(10, 30, static_shapes=True) == [8, 12, 16, 20, 24]
    assert default_bucket_boundaries(None, 30, static_shapes=True)[-1] == 512
    assert default_bucket_boundaries(12, 5) == [4, 6, 8, 10, 12]
    fine = default_bucket_boundaries(200, 200)
    assert fine[:3] == [4, 6, 8] and fine[29:32] == [62, 64, 68] and fine[-4:] == [124, 128, 160, 192]
    assert default_bucket_boundaries(None, 30)[-1] == 512
    with pytest.raises(ValueError, match="positive and increasing"):
        make_dataset([("a", "b")], CharTokenizer.build(["a"]), CharTokenizer.build(["b"]), 4, bucket_boundaries=[5, 5])


def _word_pairs(lengths):
    """Pairs whose source has `s` words and target `t` words, for (s, t) in lengths."""
    return [(" ".join(["a"] * s), " ".join(["b"] * t)) for s, t in lengths]


@pytest.fixture(scope="module")
def ab_tokenizers():
    return WordTokenizer.build(["a"]), WordTokenizer.build(["b"])


def test_batch_tokens_fills_batches_to_the_token_budget(ab_tokenizers):
    # 100 pairs of 5 source and 6 target words: rows of max(5, 6 + 1) = 7 positions, in the
    # first bucket (< 8), whose longest row is 7: 64 // 7 = 9 sentences, 63 target tokens.
    pairs = _word_pairs([(5, 6)] * 100)
    dataset = make_dataset(
        pairs, *ab_tokenizers, batch_tokens=64, max_source_length=40, max_target_length=40,
        bucket_boundaries=[8, 16, 32], shuffle=False,
    )  # fmt: skip
    counts = [int(count_tokens(t_out)) for (_, _), t_out in dataset]
    assert counts == [63] * 11 + [7]


def test_batch_tokens_bounds_every_bucket(ab_tokenizers):
    lengths = [(s, t) for s in range(1, 41) for t in range(1, 40, 3)]
    dataset = make_dataset(
        _word_pairs(lengths), *ab_tokenizers, batch_tokens=64, max_source_length=40,
        max_target_length=40, bucket_boundaries=[8, 16, 32], seed=1,
    )  # fmt: skip
    full_sizes = {0: 9, 1: 4, 2: 2, 3: 1}  # 64 // 7, 64 // 15, 64 // 31, 64 // 41
    seen, rows = {}, 0
    for x, _, t_out in _batches(dataset):
        width = max(x.shape[1], t_out.shape[1])
        assert len(x) * width <= 64 and np.sum(t_out != PAD) <= 64
        bucket = int(np.searchsorted([8, 16, 32], width, side="right"))
        assert len(x) <= full_sizes[bucket]
        seen[bucket] = max(seen.get(bucket, 0), len(x))
        rows += len(x)
    assert seen == full_sizes and rows == len(lengths)


def test_batch_tokens_arguments_say_what_was_expected(ab_tokenizers):
    pairs = _word_pairs([(2, 2)])
    with pytest.raises(ValueError, match="exactly one; got batch_size=None, batch_tokens=None"):
        make_dataset(pairs, *ab_tokenizers)
    with pytest.raises(ValueError, match="exactly one; got batch_size=8, batch_tokens=100"):
        make_dataset(pairs, *ab_tokenizers, 8, batch_tokens=100, max_source_length=9, max_target_length=9)
    with pytest.raises(ValueError, match="batch_tokens needs max_source_length and max_target_length"):
        make_dataset(pairs, *ab_tokenizers, batch_tokens=100, max_source_length=9)
    with pytest.raises(ValueError, match=r"batch_tokens=9 cannot hold the longest row \(10 tokens\)"):
        make_dataset(pairs, *ab_tokenizers, batch_tokens=9, max_source_length=9, max_target_length=9)
    assert token_batch_sizes(100, [8, 12], 9, 9) == [14, 10, 10]


def test_pass_statistics_counts_the_pairs_the_batches_hold():
    pairs = [("a b", "c"), ("a b c d e f", "c"), ("a", "c d e f g h")]
    tok = WordTokenizer.build(["a b c d e f g h"])
    dataset = make_dataset(pairs, tok, tok, 2, max_source_length=3, max_target_length=3, drop_long=True, shuffle=False)
    batches, tokens = pass_statistics(dataset)
    assert pass_statistics(dataset, rows=True) == (batches, tokens, 1)  # two pairs dropped as too long
