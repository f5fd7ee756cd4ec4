"""Reading and writing parallel text as TSV files: one `source<TAB>target` pair per line.

A test or dev file may give several references per source, `source<TAB>ref1<TAB>ref2...`
(`multi_reference=True`); scoring then uses all of them (`zoo.metrics.score`).

Policy for malformed lines (a line without exactly one TAB, or without at least one with
`multi_reference`, or with an empty column): each is logged as `path:line: reason` and
skipped, unless they are more than `max_bad_fraction` of the lines (or any at all with
`strict=True`), in which case `DataError` is raised naming the file and the first bad lines.
A missing file, bytes that are not UTF-8 and a file with no valid pair always raise
`DataError`.
"""

import dataclasses
import logging
import os
import random

from zoo.atomic_write import atomic_write

logger = logging.getLogger(__name__)

_SHOWN_BAD_LINES = 3  # how many bad lines an error message quotes


class DataError(ValueError):
    """Unusable input data; the message names the file and, where one is to blame, the line."""


@dataclasses.dataclass(frozen=True)
class BadLine:
    """One malformed line: 1-based `line_number`, what is wrong (`reason`), its `text`."""

    path: str
    line_number: int
    reason: str
    text: str

    def __str__(self):
        return f"{self.path}:{self.line_number}: {self.reason}"


@dataclasses.dataclass(frozen=True)
class TsvReport:
    """What `read_tsv_report` found.

    Fields:
      path: the file.
      pairs: list of (source, target) str pairs, the first reference as target.
      bad_lines: the skipped lines, as `BadLine`s.
      num_lines: lines in the file.
      references: one tuple of str per pair: all its references (one without
        `multi_reference`).
    """

    path: str
    pairs: list
    bad_lines: list
    num_lines: int
    references: list = dataclasses.field(default_factory=list)


def read_tsv(path, *, strict=False, max_bad_fraction=0.1):
    """Reads `source<TAB>target` pairs; see `read_tsv_report` for the rules.

    Returns:
      list of (source, target) str pairs, stripped of surrounding whitespace.
    """
    return read_tsv_report(path, strict=strict, max_bad_fraction=max_bad_fraction).pairs


def read_tsv_report(path, *, strict=False, max_bad_fraction=0.1, multi_reference=False):
    """Reads a UTF-8 TSV file of `source<TAB>target` lines and reports the bad ones.

    Args:
      path: the file.
      strict: any malformed line raises `DataError`.
      max_bad_fraction: more malformed lines than this share of all lines raises
        `DataError`; fewer are logged (`path:line: reason`) and skipped.
      multi_reference: lines may hold several targets, `source<TAB>ref1<TAB>ref2...`;
        `references` holds them all, `pairs` the first.

    Returns:
      TsvReport.

    Raises:
      DataError: missing or unreadable file, invalid UTF-8 (with its line), too many
        malformed lines, or no valid pair at all.
    """
    path = os.fspath(path)
    data = _read_bytes(path)
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()  # the newline that ends the last line does not start another
    pairs, references, bad_lines = [], [], []
    for number, raw in enumerate(lines, start=1):
        line, invalid = decode_line(raw)
        if invalid:
            raise DataError(f"{path}:{number}: {invalid}")
        if number == 1:
            line = line.removeprefix("\ufeff")  # byte order mark written by some editors
        fields, reason = split_line(line, multi_reference)
        if reason is None:
            pairs.append((fields[0], fields[1]))
            references.append(tuple(fields[1:]))
        else:
            bad_lines.append(BadLine(path, number, reason, line.removesuffix("\r")))
    report = TsvReport(path, pairs, bad_lines, len(lines), references)
    check_bad_lines(path, bad_lines, len(bad_lines), len(lines), len(pairs), strict, max_bad_fraction)
    for line in bad_lines:
        logger.warning("%s (line skipped)", line)
    return report


def decode_line(raw):
    """A line's bytes -> `(str, None)`, or `(str with U+FFFD, reason)` if they are not UTF-8."""
    try:
        return raw.decode("utf-8"), None
    except UnicodeDecodeError as error:
        return raw.decode("utf-8", errors="replace"), (
            f"invalid UTF-8 at byte {error.start + 1} of the line "
            f"({raw[error.start:error.start + 4]!r}); expected a UTF-8 text file"
        )


def split_line(line, multi_reference=False):
    """One TSV line (str, no newline) -> `(fields, None)`, or `(None, reason)` if malformed.

    `fields` are the stripped columns: source, then one target (or, with `multi_reference`,
    one or more). A trailing carriage return is ignored.
    """
    expected = "'source<TAB>target[<TAB>target...]'" if multi_reference else "'source<TAB>target'"
    line = line.removesuffix("\r")
    fields = [field.strip() for field in line.split("\t")]
    if not line.strip():
        return None, f"empty line, expected {expected}"
    if "\r" in line:  # old Mac line ends: the whole file reads as one line (with several targets: one pair)
        return None, f"expected {expected}, got {len(fields)} fields and carriage returns (\\r) inside the line: " \
                     "lines must end with \\n or \\r\\n, not \\r alone"
    if len(fields) < 2 or (len(fields) > 2 and not multi_reference):
        return None, f"expected {expected}, got {len(fields)} fields"
    if not fields[0]:
        return None, f"empty source, expected {expected}"
    if not fields[1]:
        return None, f"empty target, expected {expected}"
    for column, field in enumerate(fields[2:], start=3):
        if not field:
            return None, f"empty target in column {column}, expected {expected}"
    return fields, None


def open_tsv(path):
    """Opens a TSV file for binary reading; `DataError` naming the file if it cannot be."""
    try:
        return open(path, "rb")
    except FileNotFoundError:
        raise DataError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise DataError(f"{path}: is a directory, expected a TSV file") from None
    except OSError as error:
        raise DataError(f"{path}: cannot read: {error.strerror}") from None


def _read_bytes(path):
    with open_tsv(path) as f:
        try:
            return f.read()
        except OSError as error:
            raise DataError(f"{path}: cannot read: {error.strerror}") from None


def check_bad_lines(path, bad_lines, num_bad, num_lines, num_pairs, strict, max_bad_fraction):
    """Raises `DataError` if a file's malformed lines are too many, or it has no valid pair.

    Args:
      path: the file.
      bad_lines: `BadLine`s, at least the first few of them (they are quoted).
      num_bad, num_lines, num_pairs: counts of malformed lines, all lines, valid pairs.
      strict, max_bad_fraction: as in `read_tsv_report`.
    """
    shown = "; ".join(str(line) for line in bad_lines[:_SHOWN_BAD_LINES])
    more = f" (and {num_bad - _SHOWN_BAD_LINES} more)" if num_bad > _SHOWN_BAD_LINES else ""
    if num_bad and strict:
        raise DataError(f"{path}: {num_bad} malformed line(s): {shown}{more}")
    if num_bad and num_bad / num_lines > max_bad_fraction:  # 29 of 100 is not more than 0.29 (0.29 * 100 is below 29)
        raise DataError(
            f"{path}: {num_bad} of {num_lines} lines are malformed (more than "
            f"{max_bad_fraction:.0%}): {shown}{more}"
        )
    if not num_pairs:
        raise DataError(f"{path}: no valid 'source<TAB>target' lines")


def write_tsv(path, pairs):
    """Writes (source, target) pairs as a TSV file; refuses text that would break the format."""
    path = os.fspath(path)
    with atomic_write(path, "w", encoding="utf-8", newline="\n") as f:  # never half a file after a kill
        for index, (source, target) in enumerate(pairs):
            for side, text in (("source", source), ("target", target)):
                if "\t" in text or "\n" in text or "\r" in text or not text.strip():
                    raise DataError(
                        f"{path}: pair {index}: the {side} must be non-empty text without "
                        f"TAB or newline, got {text!r}"
                    )
            f.write(f"{source}\t{target}\n")
    return path


MAX_HELD_OUT = 1000  # the most pairs held out for a dev (or test) set: 2% of a file, at least 1


def held_out_size(num_pairs):
    """The pairs held out of `num_pairs` for one evaluation set: 2%, at least 1, at most `MAX_HELD_OUT`."""
    return min(MAX_HELD_OUT, max(1, num_pairs // 50))


def split_pairs(pairs, seed=0, name="the pairs"):
    """`{"train", "dev", "test"}`: `pairs` shuffled with `seed`, then `held_out_size` of them for dev and as
    many for test, the rest for training. Raises DataError (naming `name`) when fewer than 10 pairs would
    be left to train on."""
    pairs = list(pairs)
    random.Random(seed).shuffle(pairs)
    held = held_out_size(len(pairs))
    if len(pairs) - 2 * held < 10:
        raise DataError(f"{name}: {len(pairs)} pair(s) are too few to split into train, dev and test; "
                        f"expected at least {2 * held + 10}")
    return {"dev": pairs[:held], "test": pairs[held:2 * held], "train": pairs[2 * held:]}
