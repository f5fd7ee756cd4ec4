"""zoo.progress: one line rewritten in place on a terminal, nothing elsewhere or when silenced."""

import io

import pytest

from zoo import progress
from zoo.progress import Progress


class Terminal(io.StringIO):
    def isatty(self):
        return True


@pytest.fixture(autouse=True)
def _not_quiet():
    progress.set_quiet(False)
    yield
    progress.set_quiet(False)


def test_a_terminal_sees_counts_percent_rate_and_the_line_erased_at_the_end():
    stream = Terminal()
    with Progress("dev BLEU", total=1000, unit="sentences", stream=stream, every_seconds=0) as report:
        report.start -= 10.0  # as if it had run for 10 s
        report.update(250)
        first = stream.getvalue()
        report.update(750)
    assert first.startswith("\rdev BLEU: 250/1,000 sentences (25%), 25.0/s, 30s left")
    written = stream.getvalue()
    *reports, erase, end = written.split("\r")[1:]  # each report, then spaces over the longest, then "\r"
    assert reports[-1].startswith("dev BLEU: 1,000/1,000 sentences (100%), 100.0/s") and "left" not in reports[-1]
    assert erase == " " * max(len(report.rstrip()) for report in reports) and end == ""
    assert "\n" not in written  # erased: the lines around it read as if it had never been there


def test_keep_leaves_the_final_count_and_an_unknown_total_shows_the_count():
    stream = Terminal()
    with Progress("zoo-translate", unit="lines", stream=stream, every_seconds=0, keep=True) as report:
        for _ in report.wrap(range(3)):
            pass
    assert stream.getvalue().rstrip("\n").split("\r")[-1].startswith("zoo-translate: 3 lines, ")
    assert stream.getvalue().endswith("\n")


def test_a_shorter_line_covers_the_longer_one_before_it():
    stream = Terminal()
    report = Progress("x", total=None, stream=stream, every_seconds=0)
    report.update(123456)
    long_width = len(stream.getvalue()) - 1
    report.count = 0
    report.update(1)
    assert len(stream.getvalue().split("\r")[-1]) >= long_width


def test_quiet_when_not_a_terminal_or_silenced_unless_forced():
    pipe = io.StringIO()
    Progress("a", total=3, stream=pipe, every_seconds=0).update(3)
    assert pipe.getvalue() == ""
    progress.set_quiet(True)
    terminal = Terminal()
    with Progress("b", total=3, stream=terminal, every_seconds=0) as report:
        report.update(3)
    assert terminal.getvalue() == ""
    with Progress("c", total=3, stream=terminal, every_seconds=0, enabled=True) as report:
        report.update(3)
    assert terminal.getvalue().startswith("\rc: 3/3 (100%)")


def test_updates_are_throttled():
    stream = Terminal()
    report = Progress("x", total=100, stream=stream, every_seconds=3600)
    for _ in range(100):
        report.update(1)
    assert stream.getvalue().count("\r") == 1  # the first update only
    assert report.count == 100


def test_slow_units_read_as_seconds_each():
    report = Progress("export", total=6, unit="steps", stream=Terminal(), every_seconds=0)
    report.start -= 40.0
    report.count = 2
    assert report.line(now=report.start + 40.0) == "export: 2/6 steps (33%), 20.0s each, 80s left"


def test_forced_on_a_file_each_report_is_a_line_and_the_last_is_not_repeated():
    log = io.StringIO()  # `zoo-translate --progress 2> log`
    with Progress("zoo-translate", total=4, unit="lines", stream=log, enabled=True, every_seconds=0,
                  keep=True) as report:
        report.start -= 10.0
        report.update(2)
        report.update(2)
    lines = log.getvalue().split("\n")
    assert "\r" not in log.getvalue() and lines[-1] == ""
    assert [line.split(",")[0] for line in lines[:-1]] == ["zoo-translate: 2/4 lines (50%)",
                                                           "zoo-translate: 4/4 lines (100%)"]


def test_forced_on_a_file_the_final_count_is_written_when_throttled_away():
    log = io.StringIO()
    with Progress("x", total=100, stream=log, enabled=True, every_seconds=3600, keep=True) as report:
        for _ in range(100):
            report.update(1)
    assert log.getvalue().count("\n") == 2 and log.getvalue().split("\n")[1].startswith("x: 100/100 (100%)")
    unkept = io.StringIO()  # nothing to erase in a file: the final count ends it, not a stale one
    with Progress("y", total=600, stream=unkept, enabled=True, every_seconds=3600) as report:
        report.update(1)
        report.update(599)
    assert [line.split(",")[0] for line in unkept.getvalue().split("\n")] == ["y: 1/600 (0%)", "y: 600/600 (100%)", ""]
