"""`--profile_startup` of zoo-translate, zoo-eval and zoo-serve on the tiny export: where the time went, and
that a command on an export imports neither Keras nor matplotlib (nor JAX, nor TensorFlow Serving's protos)."""

import json
import os
import socket
import subprocess
import sys
import time

import pytest

from export_test_model import REPO_ROOT, SOURCE_TEXTS, TARGET_TEXTS, TEST_SOURCES
from test_translate_cli import cli, expected_lines

# What none of the three commands needs for an export of the `char` tokenizer.
NOT_NEEDED = ("keras", "matplotlib", "IPython", "jax", "tensorflow_serving", "tensorflow_text", "httpx")


def profile_of(stderr, command):
    """The JSON object of the last stderr line, after checking one `command: startup:` line per phase."""
    lines = stderr.rstrip("\n").split("\n")
    profile = json.loads(lines[-1])
    phase_lines = [line for line in lines if line.startswith(f"{command}: startup: ")]
    assert len(phase_lines) == len(profile["phases"]) + 1, stderr[-3000:]  # and the total
    assert profile["command"] == command and all(seconds >= 0 for seconds in profile["phases"].values())
    assert profile["total_seconds"] == pytest.approx(sum(profile["phases"].values()), abs=1e-3 * len(lines))
    assert [name for name in NOT_NEEDED if profile["imported"][name]] == []
    return profile


def test_zoo_translate_profiles_its_start_up_and_imports_neither_keras_nor_matplotlib(export_base, loaded):
    result = cli("recipes.translate", f"--model={export_base}", "--profile_startup", stdin="\n".join(TEST_SOURCES))
    assert result.returncode == 0, result.stderr.decode()[-3000:]
    assert result.stdout.decode().split("\n")[:-1] == expected_lines(loaded, TEST_SOURCES)
    profile = profile_of(result.stderr.decode(), "zoo-translate")
    assert list(profile["phases"]) == ["python", "command_line", "import_tensorflow", "op_libraries",
                                       "load_saved_model", "first_translation", "translation"]
    assert profile["imported"]["tensorflow"] and not profile["imported"]["sacrebleu"]


def test_zoo_eval_profiles_its_start_up_and_imports_neither_keras_nor_matplotlib(export_base, tmp_path):
    tsv = tmp_path / "test.tsv"
    tsv.write_text("".join(f"{s}\t{t}\n" for s, t in zip(SOURCE_TEXTS, TARGET_TEXTS)), encoding="utf-8")
    result = cli("recipes.evaluate", f"--model={export_base}", f"--tsv={tsv}", "--profile_startup")
    assert result.returncode == 0, result.stderr.decode()[-3000:]
    assert json.loads(result.stdout)["sentences"] == len(SOURCE_TEXTS)
    profile = profile_of(result.stderr.decode(), "zoo-eval")
    assert {"import_tensorflow", "load_saved_model", "first_translation", "scoring"} <= set(profile["phases"])


def test_zoo_serve_profiles_its_start_up_until_it_listens(export_base, tmp_path):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    log = tmp_path / "stderr.txt"
    with open(log, "wb") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "recipes.serve", f"--model_base_path={export_base}", f"--rest_api_port={port}",
             "--poll_seconds=0", "--profile_startup"],
            cwd=REPO_ROOT, stdout=subprocess.DEVNULL, stderr=stderr,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 240
        while process.poll() is None and time.monotonic() < deadline and '"command": "zoo-serve"' not in log.read_text():
            time.sleep(0.2)
    finally:
        process.terminate()
        process.wait(timeout=30)
    text = log.read_text()
    profile_lines = [line for line in text.split("\n") if line.startswith(("zoo-serve: startup: ", "{"))]
    profile = profile_of("\n".join(profile_lines), "zoo-serve")
    assert list(profile["phases"])[2:] == ["import_tensorflow", "import_server", "load_model", "app"], text[-3000:]
    assert profile["imported"]["uvicorn"] and not profile["imported"]["sacrebleu"]


def test_the_startup_benchmark_times_both_commands_and_reads_the_profile(export_base, tmp_path):
    output = tmp_path / "startup.json"
    result = subprocess.run([sys.executable, os.path.join(REPO_ROOT, "benchmarks", "startup.py"),
                             f"--model={export_base}", "--runs=1", "--warmup=0", f"--output={output}"],
                            cwd=REPO_ROOT, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(output.read_text())
    assert report == json.loads(result.stdout)
    translate = report["zoo_translate"]
    assert 0 < translate["first_line_seconds"][0] <= translate["seconds"][0]
    assert report["ratio"] == pytest.approx(translate["median_seconds"] / report["bare_import"]["median_seconds"],
                                            rel=1e-3)
    bare = report["bare_import"]
    assert 0 < bare["import_seconds"][0] <= bare["seconds"][0]
    assert report["ratio_first_line_to_import"] == pytest.approx(
        translate["median_first_line_seconds"] / bare["median_import_seconds"], rel=1e-3)
    assert {"import_tensorflow", "load_saved_model", "first_translation"} <= set(translate["median_phases"])
    assert report["machine"]["cpu_count"] and len(report["machine"]["load_average_before"]) == 3
