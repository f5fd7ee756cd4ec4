"""The one length-sorted batcher: batches by increasing length, results back in input order."""

import pytest

from zoo.inference import batches_by_length, translate_in_batches

TEXTS = ["ccc", "a", "bb", "", "dddd", "b2", "e"]


def test_batches_cover_every_index_once_in_order_of_length():
    assert list(batches_by_length(TEXTS, 3)) == [[3, 1, 6], [2, 5, 0], [4]]  # ties keep input order
    assert list(batches_by_length(TEXTS, 100)) == [[3, 1, 6, 2, 5, 0, 4]]
    assert list(batches_by_length([], 2)) == []
    with pytest.raises(ValueError, match="batch_size must be >= 1, received 0"):
        list(batches_by_length(TEXTS, 0))


def test_translate_in_batches_returns_results_in_input_order():
    calls = []

    def upper(batch):
        calls.append(list(batch))
        return [text.upper() for text in batch]

    assert translate_in_batches(upper, TEXTS, 2) == [text.upper() for text in TEXTS]
    assert calls == [["", "a"], ["e", "bb"], ["b2", "ccc"], ["dddd"]]


def test_translate_in_batches_rejects_a_translate_that_drops_sentences():
    with pytest.raises(ValueError, match="returned 1 results for a batch of 2 sentences"):
        translate_in_batches(lambda batch: batch[:1], ["a", "b"], 2)
