"""Parallel text too large for memory: TSV files read as a stream by tf.data.

Two passes, each in bounded memory whatever the file size:
  1. `scan_tsv` reads the file once in Python: it counts lines, checks them with the rules
     of `read_tsv_report` (many references allowed: training uses the first), and keeps a
     uniform sample of pairs to train the vocabulary on;
  2. `stream_tsv_dataset` reads it with `tf.data.TextLineDataset` at every epoch: lines are
     split and checked in the graph (malformed ones skipped), tokenized, shuffled in a
     buffer and batched by length as `make_dataset` does. Nothing is cached.
A line whose bytes are not UTF-8 is a malformed line like the others (counted, quoted,
skipped), not text with U+FFFD in it.
"""

import dataclasses
import logging
import os

import tensorflow as tf

from zoo.constants import STREAM_SAMPLE_SIZE
from zoo.data.pipeline import TOKENIZE_BATCH, Batching, tokenize_pairs
from zoo.data.sampling import reservoir_sample
from zoo.data.tsv import BadLine, DataError, check_bad_lines, decode_line, open_tsv, split_line

logger = logging.getLogger(__name__)

DEFAULT_SHUFFLE_BUFFER = 100_000  # tokenized pairs held for shuffling
_KEPT_BAD_LINES = 3  # bad lines quoted in errors and logs; the rest are only counted


@dataclasses.dataclass(frozen=True)
class TsvScan:
    """What `scan_tsv` found.

    Fields:
      path: the file.
      sample: list of (source, target) str pairs, a uniform sample of the valid ones.
      num_lines, num_pairs, num_bad: lines in the file, valid pairs, malformed lines.
      bad_lines: the first malformed lines, as `BadLine`s.
    """

    path: str
    sample: list
    num_lines: int
    num_pairs: int
    num_bad: int
    bad_lines: list


def scan_tsv(path, *, sample_size=STREAM_SAMPLE_SIZE, seed=0, strict=False, max_bad_fraction=0.1):
    """Reads a TSV file once, line by line: counts, checks and samples its pairs.

    Args:
      path: the file (`source<TAB>target[<TAB>target...]` lines).
      sample_size: most pairs kept in `sample`.
      seed: sampling seed.
      strict, max_bad_fraction: as in `read_tsv_report`.

    Returns:
      `TsvScan`.

    Raises:
      DataError: missing file, too many malformed lines, or no valid pair.
    """
    path = os.fspath(path)
    counts = {"lines": 0, "bad": 0}
    bad_lines = []

    def pairs():
        with open_tsv(path) as f:
            for number, raw in enumerate(f, start=1):
                counts["lines"] = number
                line, reason = decode_line(raw.removesuffix(b"\n"))
                if number == 1:
                    line = line.removeprefix("\ufeff")
                fields, reason = (None, reason) if reason else split_line(line, multi_reference=True)
                if reason is None:
                    yield fields[0], fields[1]
                    continue
                counts["bad"] += 1
                if len(bad_lines) < _KEPT_BAD_LINES:
                    bad_lines.append(BadLine(path, number, reason, line.removesuffix("\r")))

    sample, num_pairs = reservoir_sample(pairs(), sample_size, seed)
    check_bad_lines(path, bad_lines, counts["bad"], counts["lines"], num_pairs, strict, max_bad_fraction)
    if counts["bad"]:
        more = f" and {counts['bad'] - len(bad_lines)} more" if counts["bad"] > len(bad_lines) else ""
        logger.warning(
            "%s: %d malformed line(s) skipped: %s%s",
            path, counts["bad"], "; ".join(str(line) for line in bad_lines), more,
        )  # fmt: skip
    return TsvScan(path, sample, counts["lines"], num_pairs, counts["bad"], bad_lines)


def stream_tsv_dataset(
    paths,
    source_tokenizer,
    target_tokenizer,
    batch_size=None,
    *,
    batch_tokens=None,
    max_source_length=None,
    max_target_length=None,
    shuffle=True,
    shuffle_buffer_size=DEFAULT_SHUFFLE_BUFFER,
    seed=0,
    bucket_boundaries=None,
    drop_long=False,
    repeat=False,
    static_shapes=False,
):
    """The training dataset of TSV files read as a stream; elements as in `make_dataset`.

    Args:
      paths: a TSV file or a list of them (read in turn, in a shuffled order if `shuffle`).
      shuffle_buffer_size: tokenized pairs held for shuffling (memory grows with this, not
        with the files).
      Others: as in `make_dataset`.

    Returns:
      A `tf.data.Dataset`, prefetched.
    """
    paths = [os.fspath(paths)] if isinstance(paths, (str, os.PathLike)) else [os.fspath(p) for p in paths]
    if not paths:
        raise DataError("no TSV files to stream from")
    for path in paths:
        if not os.path.isfile(path):
            raise DataError(f"{path}: no such file")
    batching = Batching(batch_size, batch_tokens, max_source_length, max_target_length, bucket_boundaries,
                        static_shapes=static_shapes)
    files = tf.data.Dataset.from_tensor_slices(paths)
    if shuffle:
        files = files.shuffle(len(paths), seed=seed, reshuffle_each_iteration=True)
    lines = files.flat_map(tf.data.TextLineDataset)
    batches = lines.batch(TOKENIZE_BATCH).map(parse_tsv_lines, num_parallel_calls=tf.data.AUTOTUNE)
    dataset = tokenize_pairs(
        batches, source_tokenizer, target_tokenizer, max_source_length=max_source_length,
        max_target_length=max_target_length, drop_long=drop_long, batched=True,
    )  # fmt: skip
    if shuffle:
        dataset = dataset.shuffle(shuffle_buffer_size, seed=seed, reshuffle_each_iteration=True)
    if repeat:
        dataset = dataset.repeat()
    return batching.batch(dataset).prefetch(tf.data.AUTOTUNE)


def parse_tsv_lines(lines):
    """TSV lines tf.string `(B,)` -> `(sources, targets)` tf.string `(B',)`, the valid lines only.

    A valid line has a source and one or more targets, none empty after stripping; the
    target is the first one, and its bytes are UTF-8. A byte order mark and a final carriage return
    are ignored; one inside the line (old Mac line ends) makes it malformed.
    """
    utf8 = tf.equal(tf.strings.unicode_transcode(lines, "UTF-8", "UTF-8", errors="replace"), lines)
    lines = tf.strings.regex_replace(lines, "^\ufeff|\r$", "")
    fields = tf.strings.split(lines, "\t")  # (B, None)
    fields = tf.ragged.map_flat_values(tf.strings.strip, fields)
    filled = tf.ragged.map_flat_values(lambda field: tf.strings.length(field) > 0, fields)
    no_lone_cr = tf.strings.regex_full_match(lines, "[^\r]*")  # a carriage return inside a line: as `split_line`
    valid = (fields.row_lengths() >= 2) & tf.reduce_all(filled, axis=1) & utf8 & no_lone_cr
    columns = tf.ragged.boolean_mask(fields, valid).to_tensor(default_value="", shape=[None, 2])
    return columns[:, 0], columns[:, 1]
