"""The benchmarks name a bad flag at the end of their output (absl adds a line after its own bound checks),
with no traceback and before any work."""

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.mark.parametrize("script, flags, message", [
    ("decode.py", ["--batch_sizes=64,0"], "--batch_sizes=64,0: expected integers >= 1"),
    ("decode.py", ["--beam_widths=x"], "--beam_widths=x: expected integers >= 1"),
    ("decode.py", ["--stopping=exact,nosuch"], "--stopping: unknown rule(s) ['nosuch']"),
    ("decode.py", ["--repeats=0"], "flag --repeats=0: 0 is not a positive integer"),  # no repeat to time
    ("decode.py", ["--sentences=-1"], "flag --sentences=-1: -1 is not a non-negative integer"),
    ("decode.py", ["--modes=graph,XLA"], "--modes: unknown mode(s) ['XLA']; expected eager, graph and/or xla"),
    ("decode.py", ["--workdir=no/such/dir", "--tsv=x.tsv"], "--workdir=no/such/dir: not a directory"),
    ("decode.py", ["--workdir=.", "--tsv=no/such.tsv"], "--tsv=no/such.tsv: no such file"),
    ("step_rows.py", ["--workdir=no/such/dir", "--tsv=x.tsv"], "--workdir=no/such/dir: not a directory"),
    ("quality.py", ["--data_dir=no/such/dir"], "--data_dir=no/such/dir: no train.tsv, dev.tsv, test.tsv there"),
    ("quality.py", ["--data_dir=no/such/dir", "--notest"], "--data_dir=no/such/dir: no train.tsv, dev.tsv there"),
    ("long_sentences.py", ["--data_dir=no/such/dir"], "--data_dir=no/such/dir: no train.tsv, dev.tsv, test.tsv"),
    ("dates_presets.py", ["--presets=bahdanau,nosuch"], "--presets: unknown preset(s) ['nosuch']"),
    ("dates_presets.py", ["--train_steps=0"], "flag --train_steps=0: 0 is not"),
    ("dates_presets.py", ["--long=1"], "flag --long=1: 1 is not integer >= 2"),  # no short source
    ("attention.py", ["--batch=0"], "argument --batch: expected an integer >= 1, got '0'"),
    ("attention.py", ["--dtype_policy=float64"], "argument --dtype_policy: invalid choice: 'float64'"),
    ("serve.py", ["--concurrency=4,0"], "--concurrency=4,0: expected integers >= 1"),
    ("serve.py", ["--soak", "--soak_minutes=0"], "--soak_minutes=0.0: expected a number of minutes > 0"),
    ("serve.py", ["--export_dir=no/such/dir"], "--export_dir=no/such/dir: not a directory"),
    ("serve.py", ["--soak", "--soak_clients=0"], "flag --soak_clients=0: 0 is not"),
    ("startup.py", ["--model=no/such/dir"], "--model=no/such/dir: not a directory"),
])
def test_benchmark_names_a_bad_flag(script, flags, message, tmp_path):
    command = [sys.executable, os.path.join(ROOT, "benchmarks", script), *flags]
    finished = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert finished.returncode != 0
    assert message in "\n".join(finished.stderr.strip().splitlines()[-2:])
    assert "Traceback" not in finished.stderr
    assert not os.listdir(tmp_path)  # nothing written (quality.py's JSON, runs/)
