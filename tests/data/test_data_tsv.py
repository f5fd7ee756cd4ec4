"""TSV reading: valid pairs, bad lines reported with file and line, clear errors."""

import logging

import pytest

from zoo.data import DataError, read_tsv, read_tsv_report, write_tsv


def _write(tmp_path, name, content):
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return str(path)


def test_reads_pairs_stripping_whitespace_crlf_and_bom(tmp_path):
    path = _write(tmp_path, "train.tsv", "\ufeffhello\tbonjour\r\n  a b \t c \nx\ty")
    assert read_tsv(path) == [("hello", "bonjour"), ("a b", "c"), ("x", "y")]


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(DataError, match=r"nope\.tsv: no such file"):
        read_tsv(str(tmp_path / "nope.tsv"))
    with pytest.raises(DataError, match="is a directory"):
        read_tsv(str(tmp_path))


def test_few_bad_lines_are_logged_with_line_numbers_and_skipped(tmp_path, caplog):
    lines = [f"s{i}\tt{i}" for i in range(20)]
    lines[16] = "a\tb\tc"  # line 17
    lines[4] = " \tfoo"  # line 5
    path = _write(tmp_path, "train.tsv", "\n".join(lines) + "\n")
    with caplog.at_level(logging.WARNING, logger="zoo.data.tsv"):
        report = read_tsv_report(path)
    assert len(report.pairs) == 18 and report.num_lines == 20
    assert [(b.line_number, b.text) for b in report.bad_lines] == [(5, " \tfoo"), (17, "a\tb\tc")]
    messages = [r.getMessage() for r in caplog.records]
    assert f"{path}:17: expected 'source<TAB>target', got 3 fields (line skipped)" in messages
    assert f"{path}:5: empty source, expected 'source<TAB>target' (line skipped)" in messages


def test_strict_mode_fails_on_the_first_bad_line(tmp_path):
    lines = [f"s{i}\tt{i}" for i in range(20)]
    lines[1] = "no tab here"
    path = _write(tmp_path, "dev.tsv", "\n".join(lines))
    assert len(read_tsv(path)) == 19  # 1 bad line in 20 is tolerated by default
    expected = r"dev\.tsv: 1 malformed line\(s\): .*dev\.tsv:2: expected 'source<TAB>target', got 1"
    with pytest.raises(DataError, match=expected):
        read_tsv(path, strict=True)


def test_too_many_bad_lines_fail_naming_the_first_ones(tmp_path):
    path = _write(tmp_path, "train.tsv", "a\tb\nbad\nc\td\nx\t\n\nlast\n")
    with pytest.raises(DataError) as error:
        read_tsv(path)
    message = str(error.value)
    assert "4 of 6 lines are malformed (more than 10%)" in message
    assert f"{path}:2: expected 'source<TAB>target', got 1 fields" in message
    assert f"{path}:4: empty target" in message
    assert f"{path}:5: empty line" in message
    assert "(and 1 more)" in message
    assert read_tsv(path, max_bad_fraction=0.7) == [("a", "b"), ("c", "d")]


def test_empty_file_has_no_valid_lines(tmp_path):
    for content in ("", "\n"):
        path = _write(tmp_path, "train.tsv", content)
        with pytest.raises(DataError, match=r"train\.tsv: no valid 'source<TAB>target' lines|malformed"):
            read_tsv(path)
    path = _write(tmp_path, "empty.tsv", "")
    with pytest.raises(DataError, match=r"empty\.tsv: no valid 'source<TAB>target' lines"):
        read_tsv(path)


def test_invalid_utf8_names_the_line(tmp_path):
    path = _write(tmp_path, "train.tsv", b"a\tb\nc\td\xff\n")
    with pytest.raises(DataError, match=r"train\.tsv:2: invalid UTF-8 at byte 4"):
        read_tsv(path)


def test_data_error_is_a_value_error():
    assert issubclass(DataError, ValueError)


def test_write_tsv_round_trip_and_refusals(tmp_path):
    pairs = [("3 mars 2021", "2021-03-03"), ("« x »", "y")]
    path = write_tsv(str(tmp_path / "out.tsv"), pairs)
    assert read_tsv(path, strict=True) == pairs
    with pytest.raises(DataError, match="pair 0: the source must be non-empty text without TAB"):
        write_tsv(str(tmp_path / "bad.tsv"), [("a\tb", "c")])


def test_multi_reference_lines(tmp_path, caplog):
    content = "s1\tr1a\tr1b\ns2\tr2a\ns3\t r3a \t r3b \tr3c\r\ns4\tr4a\t\nbad\n"
    path = _write(tmp_path, "dev.tsv", "\n".join([content] + [f"x{i}\ty{i}" for i in range(40)]))
    with caplog.at_level(logging.WARNING, logger="zoo.data.tsv"):
        report = read_tsv_report(path, multi_reference=True)
    assert report.pairs[:3] == [("s1", "r1a"), ("s2", "r2a"), ("s3", "r3a")]
    assert report.references[:3] == [("r1a", "r1b"), ("r2a",), ("r3a", "r3b", "r3c")]
    assert len(report.pairs) == len(report.references) == 43
    assert [(b.line_number, b.reason) for b in report.bad_lines] == [
        (4, "empty target in column 3, expected 'source<TAB>target[<TAB>target...]'"),
        (5, "expected 'source<TAB>target[<TAB>target...]', got 1 fields"),
        (6, "empty line, expected 'source<TAB>target[<TAB>target...]'"),
    ]
    # Without multi_reference a third column is a malformed line, as before.
    single = read_tsv_report(path, max_bad_fraction=0.5)
    assert single.pairs[0] == ("s2", "r2a") and single.references[0] == ("r2a",)


def test_a_file_with_carriage_returns_alone_for_line_ends_says_so():
    from zoo.data.tsv import split_line

    fields, reason = split_line("un\tone\rdeux\ttwo\rtrois\tthree")  # an old Mac file: one line
    assert fields is None and "got 4 fields and carriage returns (\\r) inside the line" in reason
    assert split_line("un\tone\r") == (["un", "one"], None)  # a CRLF line end is fine


def test_carriage_returns_alone_are_refused_in_a_file_of_several_references_too(tmp_path):
    # With several targets allowed, the one line of an old Mac file read as one pair with 5 "references"
    # (zoo-eval: 1 sentence, nrefs:5; a streamed training file: 1 pair), without a word.
    path = _write(tmp_path, "dev.tsv", "\r".join(f"source {i}\ttarget {i}" for i in range(6)) + "\r")
    with pytest.raises(DataError, match=r"dev\.tsv: .*carriage returns \(\\r\) inside the line"):
        read_tsv_report(path, multi_reference=True)


@pytest.mark.parametrize("fraction, bad", [(0.29, 29), (0.57, 57), (0.1, 10)])
def test_exactly_max_bad_fraction_of_malformed_lines_is_tolerated(tmp_path, fraction, bad):
    # 0.29 * 100 is 28.999999999999996 in floating point: 29 of 100 was refused as "more than 29%".
    lines = ["no tab"] * bad + [f"s{i}\tt{i}" for i in range(100 - bad)]
    path = _write(tmp_path, "train.tsv", "\n".join(lines) + "\n")
    assert len(read_tsv(path, max_bad_fraction=fraction)) == 100 - bad
    with pytest.raises(DataError, match=rf"{bad + 1} of 100 lines are malformed"):
        _write(tmp_path, "train.tsv", "\n".join(["no tab"] + lines[:99]) + "\n")
        read_tsv(path, max_bad_fraction=fraction)
