"""Every command-line failure a user can cause: one `tool: error: ...` line, a non-zero exit, no traceback.

Each case runs the command as a user does (a subprocess) and reads back its exit status and stderr.
"""

import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODULES = {"zoo-train": "recipes.train", "zoo-eval": "recipes.evaluate", "zoo-export": "recipes.export",
           "zoo-translate": "recipes.translate", "zoo-serve": "recipes.serve"}
CAN_DENY_ROOT = os.path.isdir("/sys/kernel")  # sysfs refuses new files even to root
TINY = ["--config.dates_train_size=300", "--config.dates_dev_size=8", "--config.embedding_dim=8",
        "--config.encoder_units=8", "--config.decoder_units=8", "--config.attention_units=8",
        "--config.output_units=8", "--config.batch_size=32", "--config.num_epochs=1", "--config.final_beam_width=1",
        "--config.num_samples=0", "--config.verbose=0"]


def start(command, *args, stdin=""):
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    process = subprocess.Popen([sys.executable, "-m", MODULES[command], *args], cwd=ROOT, env=env, text=True,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    process.stdin.write(stdin)
    process.stdin.close()
    return process


def finish(command, process, pattern, status=2):
    """The process's one line of its own on stderr, which must match `pattern`."""
    out = process.stdout.read()
    err = process.stderr.read()
    process.wait(timeout=600)
    # TensorFlow's C++ start-up lines (CUDA stubs on this machine) are not the command's.
    lines = [line for line in err.splitlines() if line.startswith(command)]
    assert process.returncode == status, (command, process.returncode, err[-3000:])
    assert len(lines) == 1 and lines[0].startswith(f"{command}: error: "), (command, err[-3000:])
    assert re.search(pattern, lines[0]), (pattern, lines[0])
    assert "Traceback" not in err, err[-3000:]
    return lines[0], out


def run_all(cases):
    """Starts every case at once (each spends most of its time importing TensorFlow), checks each."""
    started = [(command, start(command, *args, stdin=stdin), pattern, status)
               for command, args, pattern, status, stdin in cases]
    return [finish(command, process, pattern, status) for command, process, pattern, status in started]


@pytest.fixture(scope="module")
def foreign_and_corrupt_models(tmp_path_factory):
    import tensorflow as tf

    base = tmp_path_factory.mktemp("models")
    module = tf.Module()
    module.f = tf.function(lambda x: {"y": 2 * x}, input_signature=[tf.TensorSpec([None], tf.float32)])
    tf.saved_model.save(module, str(base / "foreign"), signatures={"serving_default": module.f})
    (base / "corrupt").mkdir()
    (base / "corrupt" / "saved_model.pb").write_bytes(b"this is not a protocol buffer\x00\xff")
    (base / "test.tsv").write_text("3 mars 2021\t2021-03-03\n")
    return base


def test_zoo_eval_and_zoo_translate_refuse_foreign_corrupt_models_and_bad_sizes(foreign_and_corrupt_models):
    base = foreign_and_corrupt_models
    tsv = str(base / "test.tsv")
    run_all([
        ("zoo-eval", [f"--model={base / 'foreign'}", f"--tsv={tsv}"],
         r"foreign.*not a zoo export.*signatures \['serving_default'\].*expected", 2, ""),
        ("zoo-translate", [f"--model={base / 'foreign'}"], r"foreign.*not a zoo export", 2, "3 mars 2021\n"),
        ("zoo-eval", [f"--model={base / 'corrupt'}", f"--tsv={tsv}"], r"corrupt.*cannot load the SavedModel", 2, ""),
        ("zoo-translate", [f"--model={base / 'corrupt'}"], r"corrupt.*cannot load the SavedModel", 2, "x\n"),
        ("zoo-eval", [f"--model={base}", f"--tsv={tsv}", "--batch_size=-4"], r"--batch_size=-4: -4 is not a positive", 2, ""),
        ("zoo-eval", [f"--model={base}", f"--tsv={tsv}", "--beam_width=0"], r"--beam_width=0: 0 is not a positive", 2, ""),
        ("zoo-translate", [f"--model={base}", "--batch_size=-1"], r"--batch_size=-1: -1 is not a positive", 2, ""),
        ("zoo-eval", [f"--tsv={tsv}"], r"--model is required", 2, ""),
        ("zoo-eval", [f"--model={base}", "--tsv=/no/such.tsv"], r"/no/such\.tsv", 2, ""),
    ])  # fmt: skip


def test_zoo_serve_and_zoo_export_refuse_bad_numbers_and_places_they_cannot_write(tmp_path):
    (tmp_path / "file").write_text("x")
    cases = [
        ("zoo-serve", [f"--model_base_path={tmp_path}", "--max_batch_size=0"], r"--max_batch_size=0: 0 is not a positive integer", 2, ""),
        ("zoo-serve", [f"--model_base_path={tmp_path}", "--num_batch_threads=-2"], r"--num_batch_threads=-2: -2 is not", 2, ""),
        ("zoo-serve", [f"--model_base_path={tmp_path}", "--max_batch_size=lots"], r"expected a positive integer, got 'lots'", 2, ""),
        ("zoo-serve", [f"--model_base_path={tmp_path}", "--rest_api_port=99999"], r"--rest_api_port=99999: .*\[1, 65535\]", 2, ""),
        ("zoo-export", [f"--workdir={tmp_path}", f"--export_dir={tmp_path / 'file'}"], r"--export_dir .*file: is a file", 2, ""),
        ("zoo-export", [f"--workdir={tmp_path / 'file'}"], r"--workdir .*file.* not a directory", 2, ""),
        ("zoo-export", [f"--workdir={tmp_path}", "--version=0"], r"--version=0: 0 is not a positive integer", 2, ""),
        ("zoo-export", [f"--workdir={tmp_path}", "--length_penalty=nan"], r"--length_penalty must be a finite number", 2, ""),
        ("zoo-export", [f"--workdir={tmp_path}", "--length_penalty=inf"], r"--length_penalty=inf: .*\[0.0, 10.0\]", 2, ""),
        ("zoo-export", [f"--workdir={tmp_path}", "--length_penalty=11"], r"--length_penalty=11: .*\[0.0, 10.0\]", 2, ""),
    ]  # fmt: skip
    if CAN_DENY_ROOT:
        cases.append(("zoo-export", [f"--workdir={tmp_path}", "--export_dir=/sys/zoo_export"],
                      r"--export_dir /sys/zoo_export: cannot write there", 2, ""))
    run_all(cases)


def test_zoo_train_refuses_bad_workdirs_bad_values_and_data_filtered_to_nothing(tmp_path):
    (tmp_path / "file").write_text("x")
    (tmp_path / "del.tsv").write_text("".join(f"mot{i}\t\x7f\n" for i in range(20)))
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "config.json").write_text('{"model": "bahd')  # cut short
    cases = [
        ("zoo-train", ["--workdir", str(tmp_path / "file"), *TINY], r"--workdir .*file: is a file", 2, ""),
        ("zoo-train", ["--workdir", str(tmp_path / "a"), "--config.batch_size=0", "--config.learning_rate=0",
                       "--config.final_beam_width=0", "--config.dropout=1.5"],
         r"invalid config: dropout=1\.5 \(expected >= 0\.0 and < 1\.0\); batch_size=0 \(expected >= 1\); "
         r"learning_rate=0\.0 \(expected a finite number > 0\.0\); "
         r"final_beam_width=0 \(expected between 1 and 64, the export's largest beam\)$", 2, ""),
        ("zoo-train", ["--workdir", str(tmp_path / "d"), *TINY, "--config.learning_rate=inf"],
         r"invalid config: learning_rate=inf \(expected a finite number > 0\.0\)$", 2, ""),
        ("zoo-train", ["--workdir=", *TINY], r"--workdir: empty path; expected a directory", 2, ""),
        ("zoo-train", ["--workdir", str(tmp_path / "e"), *TINY, "--train_tsv="], r"--train_tsv: empty path", 2, ""),
        ("zoo-train", ["--workdir", str(tmp_path / "broken"), *TINY],
         r"zoo-train: error: .*broken/config\.json: invalid JSON \(", 2, ""),
        ("zoo-train", ["--workdir", str(tmp_path / "b"), "--config.eval_beam_width=-1"], r"eval_beam_width=-1", 2, ""),
        ("zoo-train", ["--workdir", str(tmp_path / "c"), *TINY, "--config.drop_long=true",
                       "--config.max_source_length=2"],
         r"no training pair of 300 is left after leaving out those longer than max_source_length=2 ", 2, ""),
        # Targets that normalize to nothing (DEL): no pair has a target token, and drop_long is not the cause.
        ("zoo-train", ["--recipe", "text", "--train_tsv", str(tmp_path / "del.tsv"), "--workdir", str(tmp_path / "f"),
                       "--config.shared_vocab=true", "--config.source_tokenizer=word",
                       "--config.target_tokenizer=word"],
         r"no training pair of 1\d is left after leaving out those with a side that tokenizes to no token;", 2, ""),
    ]  # fmt: skip
    if CAN_DENY_ROOT:
        cases.append(("zoo-train", ["--workdir", "/sys/zoo_run", *TINY], r"--workdir /sys/zoo_run: cannot write", 2, ""))
    run_all(cases)
    for name in ("a", "b", "d", "e"):  # refused before any file
        assert not os.path.exists(tmp_path / name), name


@pytest.mark.slow
def test_a_failed_export_fails_zoo_train_and_says_how_to_export(tmp_path):
    workdir = tmp_path / "run"
    workdir.mkdir()
    (workdir / "export").write_text("a file where the export directory should be")
    line, out = run_all([("zoo-train", ["--workdir", str(workdir), *TINY],
                          r"export failed: .*; the trained model is in .*best\.keras: zoo-export --workdir ", 1, "")])[0]
    assert os.path.isfile(workdir / "best.keras") and os.path.isfile(workdir / "results.json")
