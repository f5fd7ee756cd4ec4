"""The one length-sorted batcher of the zoo: sentences of similar length decode together.

A batch decodes for as many steps as its longest sentence needs and pads the others to
it, so sorting by length before batching saves both. A translation never depends on the
rest of its batch (docs/interfaces.md), so the reordering changes nothing but speed.
"""

import collections
import concurrent.futures


def batches_by_length(texts, batch_size):
    """Index lists of at most `batch_size`, covering `texts` in order of increasing length.

    Args:
      texts: a sequence of str or bytes.
      batch_size: int >= 1.

    Yields:
      lists of indices into `texts`; equal lengths keep their input order.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, received {batch_size}")
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    for start in range(0, len(order), batch_size):
        yield order[start : start + batch_size]


def translate_in_batches(translate, texts, batch_size, progress=None, in_flight=1):
    """`translate` applied to length-sorted batches of `texts`; the results in input order.

    Args:
      translate: `list of texts -> list of results`, one result per text.
      texts: a sequence of str or bytes.
      batch_size: most texts per call of `translate`.
      progress: a `zoo.progress.Progress` told of each batch done, or None.
      in_flight: batches translated at once, each call on a thread of its own. A search's steps
        are a chain of small ops that leaves cores idle; TensorFlow runs a call outside the GIL,
        so a second batch fills them (docs/decoding.md). The results do not change.

    Returns:
      list: one result per text, in the order of `texts`.
    """
    if in_flight < 1:
        raise ValueError(f"in_flight must be >= 1, received {in_flight}")
    results = [None] * len(texts)

    def done(index, outputs):
        if len(outputs) != len(index):
            raise ValueError(f"translate returned {len(outputs)} results for a batch of {len(index)} sentences")
        for i, output in zip(index, outputs):
            results[i] = output
        if progress is not None:
            progress.update(len(index))

    batches = batches_by_length(texts, batch_size)
    if in_flight == 1:
        for index in batches:
            done(index, translate([texts[i] for i in index]))
        return results
    with concurrent.futures.ThreadPoolExecutor(in_flight, thread_name_prefix="translate") as pool:
        pending = collections.deque()
        try:
            for index in batches:
                pending.append((index, pool.submit(translate, [texts[i] for i in index])))
                if len(pending) == in_flight:  # the oldest first: at most `in_flight` calls run
                    done(*_result(pending.popleft()))
            while pending:
                done(*_result(pending.popleft()))
        except BaseException:
            for _, future in pending:  # not started yet: not run at all
                future.cancel()
            raise
    return results


def _result(entry):
    index, future = entry
    return index, future.result()
