"""The one length-sorted batcher: batches by increasing length, results back in input order."""

import threading
import time

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


class _Translator:
    """Upper-cases a batch after a pause that shrinks with the batch's index, so later batches finish first;
    counts the calls running at once. The first calls wait (10 s at most) until `together` of them run, which
    only calls on threads of their own can do. A batch holding `fail` raises."""

    def __init__(self, together=1, fail=None):
        self.lock, self.running, self.most, self.batches = threading.Lock(), 0, 0, []
        self.together, self.all_running, self.fail = together, threading.Event(), fail

    def __call__(self, batch):
        with self.lock:
            self.running += 1
            self.most = max(self.most, self.running)
            self.batches.append(list(batch))
            order = len(self.batches)
            if self.running == self.together:
                self.all_running.set()
        try:
            if order <= self.together:
                self.all_running.wait(10)
            time.sleep(0.05 / order)
            if self.fail in batch:
                raise RuntimeError(f"cannot translate {self.fail!r}")
            return [text.upper() for text in batch]
        finally:
            with self.lock:
                self.running -= 1


@pytest.mark.parametrize("in_flight", [1, 2, 3])
def test_batches_in_flight_give_the_same_results_in_input_order_and_run_at_once(in_flight):
    texts = [f"{'x' * (i % 7)}{i}" for i in range(40)]
    translate, progress = _Translator(together=in_flight), _Progress()
    assert translate_in_batches(translate, texts, 3, progress, in_flight=in_flight) == [t.upper() for t in texts]
    assert sorted(map(sorted, translate.batches)) == sorted(sorted(texts[i] for i in b)
                                                            for b in batches_by_length(texts, 3))
    assert translate.most == in_flight  # never more calls at once, and as many as asked
    assert progress.counts == [len(b) for b in batches_by_length(texts, 3)]  # in batch order, every sentence once


def test_a_failing_batch_in_flight_raises_and_the_batches_after_it_do_not_run():
    texts = [f"{'x' * i}" for i in range(1, 31)]  # one length each: batch k holds the texts of lengths 3k+1..3k+3
    translate = _Translator(together=2, fail="x" * 4)  # the second batch
    with pytest.raises(RuntimeError, match="cannot translate 'xxxx'"):
        translate_in_batches(translate, texts, 3, in_flight=2)
    assert len(translate.batches) <= 3  # at most the batch submitted beside it and one more: not all ten
    with pytest.raises(ValueError, match="in_flight must be >= 1, received 0"):
        translate_in_batches(translate, texts, 3, in_flight=0)


class _Progress:
    def __init__(self):
        self.counts = []

    def update(self, count):
        self.counts.append(count)
