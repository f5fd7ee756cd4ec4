"""zoo-translate and zoo-export: streaming, batching, line order, workdirs, clear errors."""

import json
import os
import subprocess
import sys
import threading

import pytest
import tensorflow as tf

from export_test_model import (
    BEAM_WIDTH,
    MAX_SOURCE_LENGTH,
    REPO_ROOT,
    TEST_SOURCES,
    as_str,
    run_python,
    write_workdir,
)
from zoo.inference import load_translate_fn, read_line_windows, resolve_model, translate_stream
from zoo.inference.stream import OutputError

INPUT_LINES = ["3 mars 2021", "", "7 mai", "   ", "le 4 avril 1999", "2 2", "31/12/1987", "", "12/05/2020"]


def cli(module, *flags, stdin=""):
    return subprocess.run(
        [sys.executable, "-m", module, *flags],
        cwd=REPO_ROOT,
        input=stdin.encode("utf-8"),
        capture_output=True,
        timeout=300,
    )


def expected_lines(loaded, lines, beam_width=None):
    """What the export answers line by line (blank lines stay empty)."""
    out = []
    for line in lines:
        if not line.strip():
            out.append("")
        elif beam_width is None:
            out.append(as_str(loaded.signatures["serving_default"](source=tf.constant([line]))["translation"])[0])
        else:
            beam = loaded.signatures["beam_search"](
                source=tf.constant([line]), beam_width=tf.constant(beam_width),
                num_hypotheses=tf.constant(1), length_penalty=tf.constant(0.6),
            )
            out.append(as_str(beam["translations"])[0])
    return out


def test_read_line_windows_splits_lines_and_keeps_the_last_one_without_newline():
    read_fd, write_fd = os.pipe()
    os.write(write_fd, b"a\r\nb\n\nc")
    os.close(write_fd)
    assert [line for window in read_line_windows(read_fd, 2) for line in window] == [b"a", b"b", b"", b"c"]
    os.close(read_fd)


def test_read_line_windows_yields_a_line_before_the_input_ends():
    """Interactive use: each line is answered while the writer is still connected."""
    read_fd, write_fd = os.pipe()
    windows = read_line_windows(read_fd, 100)
    os.write(write_fd, b"first\nsec")
    assert next(windows) == [b"first"]
    timer = threading.Timer(0.2, lambda: (os.write(write_fd, b"ond\n"), os.close(write_fd)))
    timer.start()
    assert next(windows) == [b"second"]
    assert next(windows, None) is None
    timer.join()
    os.close(read_fd)


def test_read_line_windows_drops_a_byte_order_mark_even_one_byte_at_a_time():
    for pieces in ([b"\xef\xbb\xbfa\nb\n"], [b"\xef", b"\xbb", b"\xbfa\n", b"b"], [b"\xef\xbb", b"\xbf"], [b"\xef"]):
        read_fd, write_fd = os.pipe()
        windows = read_line_windows(read_fd, 100)
        for piece in pieces:
            os.write(write_fd, piece)
        os.close(write_fd)
        lines = [line for window in windows for line in window]
        os.close(read_fd)
        assert lines == ([b"\xef"] if pieces == [b"\xef"] else [] if len(pieces) == 2 else [b"a", b"b"]), pieces
    read_fd, write_fd = os.pipe()  # a mark later in the text is text
    os.write(write_fd, b"a\n\xef\xbb\xbfb\n")
    os.close(write_fd)
    assert [line for window in read_line_windows(read_fd, 100) for line in window] == [b"a", b"\xef\xbb\xbfb"]
    os.close(read_fd)


def test_translate_stream_names_an_output_it_cannot_write(tmp_path):
    path = tmp_path / "in.txt"
    path.write_bytes(b"a\n")
    with open(path, "rb") as source, open("/dev/full", "wb", buffering=0) as full:
        with pytest.raises(OutputError, match=r"^cannot write the translations to /dev/full \(No space left on device\)"):
            translate_stream(lambda batch: batch, source.fileno(), full)


def test_translate_stream_keeps_order_batches_and_skips_blank_lines(tmp_path):
    calls = []

    def shout(batch):
        calls.append(list(batch))
        return [line.upper() for line in batch]

    path = tmp_path / "in.txt"
    path.write_bytes("\n".join(INPUT_LINES).encode() + b"\n")
    out = tmp_path / "out.txt"
    with open(path, "rb") as source, open(out, "wb") as sink:
        count = translate_stream(shout, source.fileno(), sink, batch_size=2)
    assert count == len(INPUT_LINES)
    assert out.read_bytes().decode().split("\n")[:-1] == [line.upper() if line.strip() else "" for line in INPUT_LINES]
    assert all(1 <= len(batch) <= 2 for batch in calls)
    assert sorted(line for batch in calls for line in batch) == sorted(l.encode() for l in INPUT_LINES if l.strip())
    assert all(len(a) <= len(b) for batch in calls for a, b in zip(batch, batch[1:]))  # sorted by length


def test_resolve_model_accepts_versions_base_paths_and_workdirs(export_base, export_path, tmp_path):
    assert resolve_model(export_path) == ("saved_model", export_path)
    assert resolve_model(export_base) == ("saved_model", export_path)
    with pytest.raises(FileNotFoundError, match="neither saved_model.pb"):
        resolve_model(str(tmp_path))
    with pytest.raises(FileNotFoundError, match="no such directory"):
        resolve_model(str(tmp_path / "missing"))


def test_translating_an_export_imports_neither_keras_nor_the_model_code(export_base, loaded):
    """The start-up path of zoo-translate: TensorFlow and the export, nothing else of the zoo."""
    code = (
        "import sys\n"
        "from zoo.inference import load_translate_fn\n"
        "translate, _ = load_translate_fn(sys.argv[1])\n"
        "print('\\t'.join(t.decode() for t in translate([s.encode() for s in sys.argv[2:]])))\n"
        "print(' '.join(sorted(m for m in sys.modules if m.split('.')[0] in ('keras', 'zoo'))))\n"
    )
    result = run_python(code, export_base, *TEST_SOURCES)
    assert result.returncode == 0, result.stderr[-3000:]
    translations, modules = result.stdout.rstrip("\n").split("\n")[-2:]
    expected = loaded.signatures["serving_default"](source=tf.constant(TEST_SOURCES))["translation"]
    assert translations.split("\t") == as_str(expected)
    modules = modules.split()
    assert "zoo.inference.loading" in modules
    assert [m for m in modules if m not in ("zoo", "zoo.constants", "zoo.startup") and not m.startswith("zoo.inference")] == []


def test_zoo_translate_command_line(export_base, loaded):
    result = cli("recipes.translate", f"--model={export_base}", "--batch_size=2", "--progress",
                 stdin="\n".join(INPUT_LINES) + "\n")
    assert result.returncode == 0, result.stderr.decode()[-3000:]
    assert result.stdout.decode("utf-8").split("\n")[:-1] == expected_lines(loaded, INPUT_LINES)
    assert f"zoo-translate: {len(INPUT_LINES)} lines" in result.stderr.decode()


def test_beam_width_flag_uses_the_beam_search_signature(export_path, loaded, tmp_path):
    translate, description = load_translate_fn(export_path, beam_width=2)
    assert "beam_search (beam width 2" in description
    path = tmp_path / "in.txt"
    path.write_text("\n".join(INPUT_LINES), encoding="utf-8")  # no final newline
    out = tmp_path / "out.txt"
    with open(path, "rb") as source, open(out, "wb") as sink:
        translate_stream(translate, source.fileno(), sink, batch_size=3)
    assert out.read_text(encoding="utf-8").split("\n")[:-1] == expected_lines(loaded, INPUT_LINES, beam_width=2)


def expected_samples(loaded, lines, temperature, top_k, seed):
    """What the export's `sample` answers line by line (blank lines stay empty)."""
    return [
        as_str(loaded.signatures["sample"](
            source=tf.constant([line]), temperature=tf.constant(temperature),
            top_k=tf.constant(top_k), seed=tf.constant(seed),
        )["translation"])[0] if line.strip() else ""
        for line in lines
    ]


def test_zoo_translate_samples_with_the_sampling_flags(export_base, loaded):
    flags = [f"--model={export_base}", "--batch_size=2", "--sampling_temperature=2.5", "--sampling_top_k=4"]
    runs = [cli("recipes.translate", *flags, f"--seed={seed}", stdin="\n".join(INPUT_LINES) + "\n") for seed in (3, 3, 4)]
    for result in runs:
        assert result.returncode == 0, result.stderr.decode()[-3000:]
    first, again, other = (result.stdout.decode("utf-8").split("\n")[:-1] for result in runs)
    assert first == again == expected_samples(loaded, INPUT_LINES, 2.5, 4, 3)
    assert other == expected_samples(loaded, INPUT_LINES, 2.5, 4, 4) and other != first


def test_a_beam_of_one_is_greedy_search_for_an_export_and_a_workdir(parts, export_path, loaded, tmp_path):
    # Greedy, as toolkits mean a beam of 1: beam search at width 1 would go on past an end token that
    # is the best token when a length penalty favours a longer continuation.
    expected = as_str(loaded.signatures["greedy"](source=tf.constant(TEST_SOURCES))["translation"])
    translate, description = load_translate_fn(export_path, beam_width=1)
    assert description.endswith(": greedy")
    assert as_str(translate([s.encode() for s in TEST_SOURCES])) == expected
    model, source_tokenizer, target_tokenizer = parts
    config = {"max_source_length": MAX_SOURCE_LENGTH, "final_beam_width": BEAM_WIDTH, "length_penalty": 0.6}
    workdir = write_workdir(str(tmp_path / "run"), model, source_tokenizer, target_tokenizer, config)
    translate, description = load_translate_fn(workdir, beam_width=1)
    assert description.endswith("best.keras, greedy")
    assert as_str(translate([s.encode() for s in TEST_SOURCES])) == expected


def test_a_workdir_samples_like_its_export(parts, loaded, tmp_path):
    model, source_tokenizer, target_tokenizer = parts
    config = {"max_source_length": MAX_SOURCE_LENGTH, "final_beam_width": BEAM_WIDTH, "length_penalty": 0.6}
    workdir = write_workdir(str(tmp_path / "run"), model, source_tokenizer, target_tokenizer, config)
    sampling = {"temperature": 1.5, "top_k": 0, "seed": 9}
    translate, description = load_translate_fn(workdir, sampling=sampling)
    assert "sampling (temperature 1.5, top_k 0, seed 9)" in description
    expected = loaded.signatures["sample"](
        source=tf.constant(TEST_SOURCES), temperature=tf.constant(1.5), top_k=tf.constant(0), seed=tf.constant(9)
    )["translation"]
    assert as_str(translate([s.encode() for s in TEST_SOURCES])) == as_str(expected)
    with pytest.raises(ValueError, match="temperature > 0"):
        load_translate_fn(workdir, sampling={"temperature": 0.0, "top_k": 0, "seed": 0})


def test_workdir_is_translated_from_best_keras_then_exported(parts, loaded, tmp_path):
    model, source_tokenizer, target_tokenizer = parts
    config = {"max_source_length": MAX_SOURCE_LENGTH, "final_beam_width": BEAM_WIDTH, "length_penalty": 0.6}
    workdir = write_workdir(str(tmp_path / "run"), model, source_tokenizer, target_tokenizer, config)
    assert resolve_model(workdir) == ("workdir", workdir)
    translate, _ = load_translate_fn(workdir)  # Keras model, no export yet
    expected = as_str(loaded.signatures["serving_default"](source=tf.constant(TEST_SOURCES))["translation"])
    assert as_str(translate([s.encode() for s in TEST_SOURCES])) == expected

    result = cli("recipes.export", f"--workdir={workdir}", "--version=4")
    assert result.returncode == 0, result.stderr.decode()[-3000:]
    export_path = os.path.join(workdir, "export", "4")
    assert result.stdout.decode().strip() == export_path
    assert resolve_model(workdir) == ("saved_model", export_path)

    again = cli("recipes.export", f"--workdir={workdir}", "--version=4")
    assert again.returncode != 0
    assert b"exists" in again.stderr and b"Traceback" not in again.stderr


def test_zoo_eval_scores_the_export_against_its_own_translations(export_base, loaded, tmp_path):
    """A second reference equal to the export's own translation: BLEU 100 and every sentence an exact match."""
    translations = expected_lines(loaded, TEST_SOURCES)
    tsv = tmp_path / "test.tsv"
    tsv.write_text("".join(f"{s}\t1999-09-09\t{t}\n" for s, t in zip(TEST_SOURCES, translations)), encoding="utf-8")
    result = cli("recipes.evaluate", f"--model={export_base}", f"--tsv={tsv}", "--batch_size=2",
                 "--bleu_tokenize=char")
    assert result.returncode == 0, result.stderr.decode()[-3000:]
    scores = json.loads(result.stdout.decode().strip().split("\n")[-1])
    assert scores["sentences"] == len(TEST_SOURCES) and scores["exact_match"] == 1.0
    assert scores["bleu"] == pytest.approx(100.0) and "tok:char" in scores["bleu_signature"]
    assert "nrefs:2" in scores["bleu_signature"] and "nrefs:2" in scores["chrf_signature"]
    assert scores["decoding"] == f"{os.path.join(export_base, '1')}: serving_default (beam width {BEAM_WIDTH})"

    missing = cli("recipes.evaluate", f"--model={export_base}", f"--tsv={tmp_path / 'missing.tsv'}")
    assert missing.returncode == 2 and b"zoo-eval: error:" in missing.stderr and b"Traceback" not in missing.stderr


@pytest.mark.parametrize(
    "module, flags, message",
    [
        ("recipes.translate", ["--model=/no/such/dir"], b"is not a directory"),
        ("recipes.translate", ["--model=/tmp", "--batch_size=0"], b"--batch_size=0: 0 is not a positive integer"),
        ("recipes.translate", ["--model=/tmp", "--sampling_temperature=0"], b"--sampling_temperature > 0"),
        ("recipes.translate", ["--model=/tmp", "--sampling_temperature=1", "--beam_width=2"], b"no --beam_width"),
        ("recipes.translate", ["--model=/tmp", "--sampling_temperature=nan"], b"finite --sampling_temperature > 0"),
        ("recipes.translate", ["--model=/tmp", "--sampling_temperature=inf"], b"finite --sampling_temperature > 0"),
        # An export read 1e39 as an infinite temperature, and top_k 2**32 + 3 as 3 (a workdir as the whole vocabulary)
        ("recipes.translate", ["--model=/tmp", "--sampling_temperature=1e39"], b"(a float32, at most 3.402823e+38)"),
        ("recipes.translate", ["--model=/tmp", "--sampling_temperature=2", "--sampling_top_k=4294967299"],
         b"--sampling_top_k=4294967299: 4294967299 is not an integer in the range [0, 2147483647]"),
        ("recipes.translate", ["--model=/tmp", "--sampling_temperature=1", "--seed=4294967297"],
         b"--seed=4294967297: 4294967297 is not an integer in the range [-2147483648, 2147483647]"),  # it wrapped to seed 1
        ("recipes.translate", ["--model=/tmp", "--sampling_top_k=5"],  # was ignored: beam search ran
         b"--sampling_top_k=5 without --sampling_temperature; expected them with --sampling_temperature T > 0"),
        ("recipes.translate", ["--model=/tmp", "--seed=3", "--beam_width=2"], b"--seed=3 without --sampling_temp"),
        ("recipes.export", ["--workdir=/no/such/dir"], b"is not a directory"),
        ("recipes.export", ["--workdir=/tmp", "--beam_width=100000"],
         b"--beam_width=100000: 100000 is not an integer in the range [1, 64]"),  # not ServingModule's words
    ],
)
def test_bad_flags_exit_with_one_clear_message(module, flags, message):
    result = cli(module, *flags)
    assert result.returncode != 0
    assert message in result.stderr and b"Traceback" not in result.stderr
