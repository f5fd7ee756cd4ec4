"""One-line progress reports for work that takes more than a few seconds.

    with Progress("dev BLEU", total=len(sources), unit="sentences") as progress:
        for batch in batches:
            ...
            progress.update(len(batch))

shows, rewritten in place on stderr, `dev BLEU: 512/1,000 sentences (51%), 120.3/s, 4s left`
and erases itself when done, so the lines around it read as if it had never been there.
It is quiet when stderr is not a terminal (a log file or a pipe gets no carriage returns)
unless enabled explicitly (`zoo-translate --progress 2> log`): then each report is a line
of its own, and the final one is not written twice. It is also quiet after
`set_quiet(True)`, which the commands call for `--verbosity` below 0 and `zoo-train` for
`--config.verbose=0`.

Standard library only, so that every layer of the zoo (`zoo/data` included) may use it.
"""

import sys
import time

_quiet = False


def set_quiet(quiet):
    """Silences (True) or allows (False) every `Progress` that is not explicitly enabled."""
    global _quiet
    _quiet = bool(quiet)


def is_terminal(stream):
    """True when `stream` is a terminal: a report rewrites one line in place there."""
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def default_enabled(stream):
    """True when `stream` is a terminal and progress has not been silenced."""
    return not _quiet and is_terminal(stream)


class Progress:
    """Counts work done towards a known (or unknown) total and reports it on one line.

    Args:
      label: what is being done, e.g. "vocabulary" or "zoo-eval".
      total: the count at which the work is done; None when it is not known in advance.
      unit: the plural name of what is counted ("sentences", "lines", "steps").
      stream: where the line goes (default: `sys.stderr`, looked up when created).
      enabled: True or False forces it on or off; None follows `default_enabled(stream)`.
      every_seconds: least time between two rewrites of the line.
      keep: leave the last line on screen when done instead of erasing it.
    """

    def __init__(self, label, total=None, unit="", stream=None, enabled=None, every_seconds=0.5, keep=False):
        self.label = label
        self.total = total
        self.unit = unit
        self.stream = sys.stderr if stream is None else stream
        self.enabled = default_enabled(self.stream) if enabled is None else bool(enabled)
        self.every_seconds = every_seconds
        self.keep = keep
        self.count = 0
        self.start = time.monotonic()
        self._last_write = None
        self._last_text = None
        self._terminal = is_terminal(self.stream)  # rewrite one line in place; otherwise one line per report
        self._width = 0
        self._closed = False

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    def line(self, now=None):
        """The report as it stands: `label: done/total unit (pct%), rate/s, Ns left`."""
        elapsed = max((time.monotonic() if now is None else now) - self.start, 1e-9)
        unit = f" {self.unit}" if self.unit else ""
        if self.total:
            text = f"{self.label}: {self.count:,}/{self.total:,}{unit} ({100 * self.count / self.total:.0f}%)"
        else:
            text = f"{self.label}: {self.count:,}{unit}"
        rate = self.count / elapsed
        # Slow units (export steps) read better as seconds each than as 0.0/s.
        text += f", {rate:,.1f}/s" if rate >= 1 or not self.count else f", {1 / rate:,.1f}s each"
        if self.total and rate > 0 and self.count < self.total:
            text += f", {(self.total - self.count) / rate:.0f}s left"
        return text

    def update(self, count=1):
        """Adds `count` to the work done; rewrites the line at most every `every_seconds`."""
        self.count += count
        now = time.monotonic()
        if self.enabled and (self._last_write is None or now - self._last_write >= self.every_seconds):
            self._write(self.line(now))
            self._last_write = now

    def wrap(self, iterable):
        """Yields the items of `iterable`, counting one per item."""
        for item in iterable:
            yield item
            self.update(1)

    def close(self):
        """On a terminal, shows the final count (with `keep`) or erases the line; elsewhere the final
        count ends the output unless it is already the last line. Idempotent."""
        if self._closed:
            return
        self._closed = True
        if not self.enabled or self._last_write is None:
            return
        if not self._terminal:  # nothing to erase in a file: its last line is the final count, written once
            text = self.line()
            if text != self._last_text:
                self._write(text)
        elif self.keep:
            self._write(self.line())
            self.stream.write("\n")
        else:
            self.stream.write("\r" + " " * self._width + "\r")
        self.stream.flush()

    def _write(self, text):
        if self._terminal:  # padded with spaces: a shorter line must cover the end of a longer one
            self.stream.write("\r" + text.ljust(self._width))
        else:
            self.stream.write(text + "\n")
        self.stream.flush()
        self._last_text = text
        self._width = max(self._width, len(text))
