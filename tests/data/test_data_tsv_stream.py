"""Streaming TSV input: one-pass scan and sample, in-graph parsing, the same batches as in memory, flat memory."""

import json
import logging
import os
import random
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import tensorflow as tf

import zoo
from zoo.data import DataError, WordTokenizer, make_dataset, vocabulary
from zoo.data.tsv_stream import parse_tsv_lines, scan_tsv, stream_tsv_dataset

PAD = vocabulary.PAD_ID
_REPOSITORY = os.path.dirname(os.path.dirname(os.path.abspath(zoo.__file__)))


def _write(tmp_path, name, content):
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return str(path)


def _pairs(count, seed=0):
    rng = random.Random(seed)
    words = ["le", "chat", "noir", "dort", "sur", "un", "tapis", "rouge", "ce", "soir"]
    return [
        (" ".join(rng.choices(words, k=rng.randint(1, 12))), " ".join(rng.choices(words, k=rng.randint(1, 12))))
        for _ in range(count)
    ]


@pytest.fixture(scope="module")
def tokenizer():
    return WordTokenizer.build(["le chat noir dort sur un tapis rouge ce soir"])


def _decoded_pairs(dataset, tokenizer):
    pairs = []
    for (x, _), t_out in dataset:
        sources = [s.decode() for s in tokenizer.decode(x).numpy()]
        targets = [t.decode() for t in tokenizer.decode(t_out).numpy()]
        pairs += zip(sources, targets)
    return pairs


def test_parse_lines_in_the_graph_keeps_valid_ones_and_the_first_target():
    lines = tf.constant(
        [b"\xef\xbb\xbfa\tb", b"x\ty\tz\r", b"bad", b"", b" \tq", b"q\t ", b"q\tr\t", b" s \t t ", b"caf\xc3\tok"]
    )
    sources, targets = parse_tsv_lines(lines)
    assert sources.numpy().tolist() == [b"a", b"x", b"s"]  # not the line that is not UTF-8
    assert targets.numpy().tolist() == [b"b", b"y", b"t"]
    sources, _ = parse_tsv_lines(tf.constant([b"un\tone\rdeux\ttwo\r", b"trois\tthree\r"]))  # \r alone: a bad line
    assert sources.numpy().tolist() == [b"trois"]


def test_a_streamed_file_with_carriage_returns_alone_is_refused(tmp_path):
    path = _write(tmp_path, "train.tsv", "\r".join(f"{s}\t{t}" for s, t in _pairs(30)) + "\r")
    with pytest.raises(DataError, match="carriage returns"):  # it trained on "1 training pairs"
        scan_tsv(path, sample_size=50, seed=1)


def test_scan_counts_checks_and_samples(tmp_path, caplog):
    lines = [f"{s}\t{t}" for s, t in _pairs(200)]
    lines[9], lines[99] = "no tab", "a\t\tc"
    lines[49] += "\tsecond reference"
    path = _write(tmp_path, "train.tsv", "\ufeff" + "\n".join(lines) + "\n")
    with caplog.at_level(logging.WARNING, logger="zoo.data.tsv_stream"):
        scan = scan_tsv(path, sample_size=50, seed=1)
    assert len(caplog.records) == 1 and "2 malformed line(s) skipped" in caplog.records[0].getMessage()
    assert (scan.num_lines, scan.num_pairs, scan.num_bad) == (200, 198, 2)
    assert [(b.line_number, b.text) for b in scan.bad_lines] == [(10, "no tab"), (100, "a\t\tc")]
    assert len(scan.sample) == 50 and len(set(scan.sample)) == len(scan.sample)
    valid = [tuple(line.split("\t")[:2]) for i, line in enumerate(lines) if i not in (9, 99)]
    assert set(scan.sample) <= set(valid)
    assert scan.sample == sorted(scan.sample, key=valid.index)  # file order is kept
    assert scan_tsv(path, sample_size=50, seed=1).sample == scan.sample
    assert scan_tsv(path, sample_size=500).sample == valid


def test_lines_that_are_not_utf8_are_malformed_in_the_scan_and_the_stream(tmp_path, tokenizer):
    # A Latin-1 file stops as it does in memory; a stray byte is reported and skipped, not read as U+FFFD.
    latin1 = tmp_path / "latin1.tsv"
    latin1.write_bytes("".join(f"été {i}\tsummer {i}\n" for i in range(20)).encode("latin-1"))
    with pytest.raises(DataError, match=r"20 of 20 lines are malformed .*latin1\.tsv:1: invalid UTF-8 at byte 1 "
                                        r"of the line \(b'\\xe9t\\xe9 '\); expected a UTF-8 text file"):
        scan_tsv(str(latin1))
    lines = [f"{s}\t{t}\n".encode() for s, t in _pairs(40)]
    lines[5] = b"caf\xe9\tcoffee\n"
    path = tmp_path / "stray.tsv"
    path.write_bytes(b"".join(lines))
    scan = scan_tsv(str(path))
    assert (scan.num_pairs, scan.num_bad, scan.bad_lines[0].line_number) == (39, 1, 6)
    streamed = _decoded_pairs(stream_tsv_dataset(str(path), tokenizer, tokenizer, 8, shuffle=False), tokenizer)
    assert len(streamed) == 39


def test_scan_errors_name_the_file(tmp_path):
    with pytest.raises(DataError, match=r"nope\.tsv: no such file"):
        scan_tsv(str(tmp_path / "nope.tsv"))
    path = _write(tmp_path, "bad.tsv", "a\tb\nbad\nworse\nc\td\n")
    with pytest.raises(DataError, match=r"2 of 4 lines are malformed .*bad\.tsv:2: expected"):
        scan_tsv(path)
    with pytest.raises(DataError, match=r"bad\.tsv: 2 malformed line\(s\)"):
        scan_tsv(path, strict=True, max_bad_fraction=1.0)
    with pytest.raises(DataError, match=r"empty\.tsv: no valid 'source<TAB>target' lines"):
        scan_tsv(_write(tmp_path, "empty.tsv", ""))
    with pytest.raises(DataError, match=r"missing\.tsv: no such file"):
        stream_tsv_dataset([str(tmp_path / "missing.tsv")], WordTokenizer.build(["a"]), WordTokenizer.build(["a"]), 4)


def test_stream_gives_the_pairs_of_the_file_like_make_dataset(tmp_path, tokenizer):
    pairs = _pairs(300)
    lines = [f"{s}\t{t}" for s, t in pairs] + ["malformed", f"{pairs[0][0]}\t{pairs[0][1]}\textra reference", "\t"]
    first = _write(tmp_path, "part1.tsv", "\n".join(lines[:150]) + "\n")
    second = _write(tmp_path, "part2.tsv", "\r\n".join(lines[150:]))
    stream = stream_tsv_dataset(
        [first, second], tokenizer, tokenizer, 16, max_source_length=8, max_target_length=8,
        shuffle_buffer_size=64, bucket_boundaries=[6, 9],
    )  # fmt: skip
    in_memory = make_dataset(
        pairs + [pairs[0]], tokenizer, tokenizer, 16, max_source_length=8, max_target_length=8,
        bucket_boundaries=[6, 9],
    )  # fmt: skip
    streamed = _decoded_pairs(stream, tokenizer)
    assert len(streamed) == 301
    assert sorted(streamed) == sorted(_decoded_pairs(in_memory, tokenizer))
    assert stream.element_spec == in_memory.element_spec


def test_stream_shuffles_by_seed_and_repeats(tmp_path, tokenizer):
    path = _write(tmp_path, "train.tsv", "".join(f"{s}\t{t}\n" for s, t in _pairs(200)))

    def rows(seed, repeat=False):
        dataset = stream_tsv_dataset(
            path, tokenizer, tokenizer, 8, seed=seed, shuffle_buffer_size=50, repeat=repeat,
            bucket_boundaries=[6, 9],
        )  # fmt: skip
        batches = list(dataset.take(60)) if repeat else list(dataset)
        return [tuple(r[r != PAD].tolist()) for (x, _), _ in batches for r in x.numpy()]

    first = rows(3)
    assert first == rows(3) and first != rows(4) and sorted(first) == sorted(rows(4))
    assert len(rows(3, repeat=True)) > 200
    unshuffled = stream_tsv_dataset(path, tokenizer, tokenizer, 8, shuffle=False, bucket_boundaries=[])
    assert [s for s, _ in _decoded_pairs(unshuffled, tokenizer)] == [s for s, _ in _pairs(200)]


def test_stream_batches_by_tokens(tmp_path, tokenizer):
    path = _write(tmp_path, "train.tsv", "".join(f"{s}\t{t}\n" for s, t in _pairs(300)))
    dataset = stream_tsv_dataset(
        path, tokenizer, tokenizer, batch_tokens=40, max_source_length=12, max_target_length=12,
        bucket_boundaries=[5, 9],
    )  # fmt: skip
    sizes = []
    for (x, _), t_out in dataset:
        width = max(x.shape[1], t_out.shape[1])
        assert len(x) * width <= 40
        sizes.append(len(x))
    assert sum(sizes) == 300 and max(sizes) == 10  # 40 // 4 in the first bucket


def _write_generated_tsv(path, megabytes):
    """A TSV of `megabytes` MB: 500 distinct random pairs of 40-120 words a side, over and over.

    Long lines keep the test quick: tf.data's cost per sentence, not per byte, dominates a
    stream of short lines. The pipeline truncates them to 50 tokens.
    """
    rng = random.Random(0)
    words = ["".join(rng.choices("abcdefghijklmnopqrstuvwxyzéè", k=rng.randint(2, 9))) for _ in range(3000)]
    block = "".join(
        " ".join(rng.choices(words, k=rng.randint(40, 120))) + "\t"
        + " ".join(rng.choices(words, k=rng.randint(40, 120))) + "\n"
        for _ in range(500)
    ).encode("utf-8")  # fmt: skip
    with open(path, "wb") as f:
        for _ in range(-(-megabytes * 1_000_000 // len(block))):
            f.write(block)


_MEASURE = textwrap.dedent(
    """
    import json, resource, sys
    import tensorflow as tf
    from zoo.data import build_tokenizer_pair
    from zoo.data.tsv_stream import scan_tsv, stream_tsv_dataset
    scan = scan_tsv(sys.argv[1], sample_size=5000)
    source, target = build_tokenizer_pair("word", scan.sample, max_size=2000)
    dataset = stream_tsv_dataset(sys.argv[1], source, target, 64, max_source_length=50,
                                 max_target_length=50, shuffle_buffer_size=5000)
    rows = int(dataset.reduce(tf.constant(0), lambda n, batch: n + tf.shape(batch[1])[0]))
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"lines": scan.num_lines, "rows": rows, "peak_mb": peak_mb}))
    """
)


@pytest.mark.slow  # streams 220 MB through the whole input pipeline
def test_stream_memory_is_flat_in_the_file_size(tmp_path):
    results = {}
    for megabytes in (20, 200):
        path = str(tmp_path / f"{megabytes}.tsv")
        _write_generated_tsv(path, megabytes)
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=_REPOSITORY)
        run = subprocess.run(
            [sys.executable, "-c", _MEASURE, path], capture_output=True, text=True, env=env, timeout=900
        )
        assert run.returncode == 0, run.stderr[-3000:]
        results[megabytes] = json.loads(run.stdout.strip().splitlines()[-1])
        os.remove(path)
    for result in results.values():
        assert result["rows"] == result["lines"]  # every pair went through the pipeline
    assert results[200]["lines"] > 9 * results[20]["lines"]
    assert results[200]["peak_mb"] <= 1.10 * results[20]["peak_mb"], results
