"""The one length-sorted batcher of the zoo: sentences of similar length decode together.

A batch decodes for as many steps as its longest sentence needs and pads the others to
it, so sorting by length before batching saves both. A translation never depends on the
rest of its batch (docs/interfaces.md), so the reordering changes nothing but speed.
"""


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


def translate_in_batches(translate, texts, batch_size, progress=None):
    """`translate` applied to length-sorted batches of `texts`; the results in input order.

    Args:
      translate: `list of texts -> list of results`, one result per text.
      texts: a sequence of str or bytes.
      batch_size: most texts per call of `translate`.
      progress: a `zoo.progress.Progress` told of each batch done, or None.

    Returns:
      list: one result per text, in the order of `texts`.
    """
    results = [None] * len(texts)
    for index in batches_by_length(texts, batch_size):
        outputs = translate([texts[i] for i in index])
        if len(outputs) != len(index):
            raise ValueError(f"translate returned {len(outputs)} results for a batch of {len(index)} sentences")
        for i, output in zip(index, outputs):
            results[i] = output
        if progress is not None:
            progress.update(len(index))
    return results
