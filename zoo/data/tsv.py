"""Reading and writing parallel text as TSV files: one `source<TAB>target` pair per line.

Policy for malformed lines (a line without exactly one TAB, or with an empty side): each
is logged as `path:line: reason` and skipped, unless they are more than `max_bad_fraction`
of the lines (or any at all with `strict=True`), in which case `DataError` is raised naming
the file and the first bad lines. A missing file, bytes that are not UTF-8 and a file with
no valid pair always raise `DataError`.
"""

import dataclasses
import logging
import os

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
    """What `read_tsv_report` found: the valid `pairs`, the skipped `bad_lines`, `num_lines`."""

    path: str
    pairs: list
    bad_lines: list
    num_lines: int


def read_tsv(path, *, strict=False, max_bad_fraction=0.1):
    """Reads `source<TAB>target` pairs; see `read_tsv_report` for the rules.

    Returns:
      list of (source, target) str pairs, stripped of surrounding whitespace.
    """
    return read_tsv_report(path, strict=strict, max_bad_fraction=max_bad_fraction).pairs


def read_tsv_report(path, *, strict=False, max_bad_fraction=0.1):
    """Reads a UTF-8 TSV file of `source<TAB>target` lines and reports the bad ones.

    Args:
      path: the file.
      strict: any malformed line raises `DataError`.
      max_bad_fraction: more malformed lines than this share of all lines raises
        `DataError`; fewer are logged (`path:line: reason`) and skipped.

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
    pairs, bad_lines = [], []
    for number, raw in enumerate(lines, start=1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise DataError(
                f"{path}:{number}: invalid UTF-8 at byte {error.start + 1} of the line "
                f"({raw[error.start:error.start + 4]!r}); expected a UTF-8 text file"
            ) from None
        if number == 1:
            line = line.removeprefix("\ufeff")  # byte order mark written by some editors
        line = line.removesuffix("\r")
        fields = line.split("\t")
        reason = None
        if not line.strip():
            reason = "empty line, expected 'source<TAB>target'"
        elif len(fields) != 2:
            reason = f"expected 'source<TAB>target', got {len(fields)} fields"
        elif not fields[0].strip():
            reason = "empty source, expected 'source<TAB>target'"
        elif not fields[1].strip():
            reason = "empty target, expected 'source<TAB>target'"
        if reason is None:
            pairs.append((fields[0].strip(), fields[1].strip()))
        else:
            bad_lines.append(BadLine(path, number, reason, line))
    report = TsvReport(path=path, pairs=pairs, bad_lines=bad_lines, num_lines=len(lines))
    _check(report, strict, max_bad_fraction)
    return report


def _read_bytes(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        raise DataError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise DataError(f"{path}: is a directory, expected a TSV file") from None
    except OSError as error:
        raise DataError(f"{path}: cannot read: {error.strerror}") from None


def _check(report, strict, max_bad_fraction):
    bad = report.bad_lines
    shown = "; ".join(str(line) for line in bad[:_SHOWN_BAD_LINES])
    more = f" (and {len(bad) - _SHOWN_BAD_LINES} more)" if len(bad) > _SHOWN_BAD_LINES else ""
    if bad and strict:
        raise DataError(f"{report.path}: {len(bad)} malformed line(s): {shown}{more}")
    if bad and len(bad) > max_bad_fraction * report.num_lines:
        raise DataError(
            f"{report.path}: {len(bad)} of {report.num_lines} lines are malformed (more than "
            f"{max_bad_fraction:.0%}): {shown}{more}"
        )
    if not report.pairs:
        raise DataError(f"{report.path}: no valid 'source<TAB>target' lines")
    for line in bad:
        logger.warning("%s (line skipped)", line)


def write_tsv(path, pairs):
    """Writes (source, target) pairs as a TSV file; refuses text that would break the format."""
    path = os.fspath(path)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for index, (source, target) in enumerate(pairs):
            for side, text in (("source", source), ("target", target)):
                if "\t" in text or "\n" in text or "\r" in text or not text.strip():
                    raise DataError(
                        f"{path}: pair {index}: the {side} must be non-empty text without "
                        f"TAB or newline, got {text!r}"
                    )
            f.write(f"{source}\t{target}\n")
    return path
