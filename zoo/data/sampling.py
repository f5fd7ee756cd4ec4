"""A bounded, uniform sample of a stream too large to hold: reservoir sampling."""

import random


def reservoir_sample(items, size, seed=0):
    """A uniform random sample of at most `size` items of an iterable, read once.

    Memory holds `size` items whatever the length of `items` (Vitter's algorithm R); the
    sample keeps the order in which its items came, so a stream shorter than `size` comes
    back whole and unchanged.

    Args:
      items: any iterable (a generator over a file is read once, lazily).
      size: most items kept, >= 1.
      seed: the same seed and stream give the same sample.

    Returns:
      `(sample, count)`: list of at most `size` items, and how many items the stream held.
    """
    if size < 1:
        raise ValueError(f"a sample holds at least 1 item, got size={size}")
    rng = random.Random(seed)
    reservoir = []  # (position in the stream, item)
    count = 0
    for count, item in enumerate(items, start=1):
        if count <= size:
            reservoir.append((count, item))
            continue
        slot = rng.randrange(count)
        if slot < size:
            reservoir[slot] = (count, item)
    reservoir.sort(key=lambda entry: entry[0])
    return [item for _, item in reservoir], count
