"""A training TSV read as a stream (`config.stream_train`, docs/training.md).

A streamed training split is a `zoo.data.tsv_stream.TsvScan` (the file's counts and a bounded
uniform sample of its pairs), never a list of every pair: the vocabulary is built on the
sample, the batches are read from the file at every epoch by `stream_tsv_dataset`, and the
batches and tokens of a pass are estimated on the sample instead of counted over the file.
Memory stays flat whatever the file's size. Only dataset `tsv` streams (`validate_config`
refuses `stream_train="true"` with another one).
"""

import os

from zoo.data import DataError, datasets
from zoo.data.datasets.tsv import read_dev_tsv
from zoo.data.pipeline import pass_statistics
from zoo.data.tsv_stream import TsvScan, scan_tsv

STREAM_THRESHOLD_BYTES = 256 * 2**20  # stream_train="auto" streams a training TSV larger than this


def streams(config):
    """Whether `config`'s training file is read as a stream.

    `stream_train` "true", or "auto" and a `train_tsv` over `STREAM_THRESHOLD_BYTES`; never
    for another dataset than `tsv`, nor without a training file (whose error comes when the
    data is read).
    """
    value = str(config.get("stream_train", "false")).lower()
    if value == "false" or datasets.dataset_name(config) != "tsv" or not config.get("train_tsv"):
        return False
    return value == "true" or (os.path.isfile(config.train_tsv)
                               and os.path.getsize(config.train_tsv) > STREAM_THRESHOLD_BYTES)


def load_streamed(config):
    """`{"train": TsvScan, "dev": [...]}`: the training file scanned once (counted, checked, sampled).

    Raises:
      DataError: no `dev_tsv` (a stream holds no pairs out), missing or malformed files.
    """
    if not config.dev_tsv:
        raise DataError(f"{config.train_tsv} is streamed (stream_train={config.stream_train!r}) and a stream "
                        "holds no dev pairs out; expected --dev_tsv, or stream_train=false to hold out 2% in memory")
    scan = scan_tsv(config.train_tsv, sample_size=config.stream_sample_size, seed=config.seed,
                    max_bad_fraction=config.max_bad_fraction)
    return {"train": scan, "dev": read_dev_tsv(config.dev_tsv, config.max_bad_fraction)}


def estimated_statistics(sample_dataset, scan):
    """`(batches, real tokens)` of one pass over the streamed file, estimated on its sample.

    `sample_dataset` batches `scan.sample` as the stream batches the file: its counts are
    scaled by `num_pairs / len(sample)`, so tokens per batch (train_tokens_per_second of
    results.json) is the sample's mean and the batches of a pass (steps_per_epoch when the
    recipe gives none) an estimate; the file itself is never read for them. A file no larger
    than the sample is counted exactly; a larger one's estimate also scales the sample's last,
    partial batch of each length bucket, so a sample of few pairs over-counts batches (and
    under-counts tokens per batch); the default 300,000 pairs keep that well under 1%.
    """
    batches, tokens = pass_statistics(sample_dataset)
    scale = scan.num_pairs / len(scan.sample)
    return round(batches * scale), round(tokens * scale)


def num_pairs(train):
    """The training pairs of a split: a list's length, or the pairs a scan counted in the file."""
    return train.num_pairs if isinstance(train, TsvScan) else len(train)
