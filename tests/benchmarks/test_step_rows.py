"""benchmarks/step_rows.py: the line it fits, the steps it times, and its JSON end to end."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import zoo.models

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
from decode_flops import CountingModel  # noqa: E402
from step_rows import fit, step_loop  # noqa: E402


def test_fit_recovers_a_line_and_splits_fixed_from_per_row_cost():
    rows = [4, 16, 43, 64]
    fixed, per_row = fit(rows, [0.7 + 0.05 * r for r in rows])
    assert fixed == pytest.approx(0.7) and per_row == pytest.approx(0.05)
    # Least squares, not the end points: a noisy middle point moves the line.
    fixed, per_row = fit([0, 1, 2], [0.0, 2.0, 1.0])
    assert per_row == pytest.approx(0.5) and fixed == pytest.approx(0.5)
    # One row count: all of the cost per row.
    assert fit([8, 8], [2.0, 4.0]) == (0.0, pytest.approx(3.0 / 8))


def test_the_loop_runs_the_model_step_on_every_row_of_every_step():
    # decode_flops' counting model passes the output layer and kernels through, as the benchmark prepares them.
    model = CountingModel(zoo.models.build("luong_general", 9, 11, embedding_dim=4, encoder_units=3,
                                           decoder_units=5, dropout=0.0))
    sources = np.array([[5, 6, 7], [8, 4, 0], [4, 4, 4]], np.int32)
    total = step_loop(model, sources, hypotheses=2, steps=4)()
    counts = model.read()
    assert counts["encoded_positions"] == 3 * 3 and counts["sentences"] == 3
    assert counts["row_steps"] == 4 * 3 * 2 and counts["row_columns"] == 4 * 3 * 2 * 11
    assert np.isfinite(total.numpy())


@pytest.mark.slow
def test_step_rows_benchmark_reports_each_point_and_its_fit():
    command = [sys.executable, os.path.join(ROOT, "benchmarks", "step_rows.py"), "--vocab_size=40",
               "--source_length=6", "--sentences=1,3", "--hypotheses=1,2", "--steps=3", "--repeats=2"]
    finished = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert finished.returncode == 0, finished.stderr[-3000:]
    report = json.loads(finished.stdout)
    assert report["source_length"] == 6 and report["steps"] == 3 and report["weights"] == "random"
    assert [(p["sentences"], p["hypotheses"], p["rows"]) for p in report["points"]] == [
        (1, 1, 1), (3, 1, 3), (1, 2, 2), (3, 2, 6)]
    for point in report["points"]:
        assert point["ms_per_step"] > 0
        assert point["ms_per_row"] == pytest.approx(point["ms_per_step"] / point["rows"], rel=0.01, abs=1e-4)
    for width in ("1", "2"):  # two points a width: the line through them
        mine = [p for p in report["points"] if str(p["hypotheses"]) == width]
        slope = (mine[1]["ms_per_step"] - mine[0]["ms_per_step"]) / (mine[1]["rows"] - mine[0]["rows"])
        assert report["fit"][width]["per_row_ms"] == pytest.approx(slope, rel=0.01, abs=1e-4)
    if report["fit"]["1"]["per_row_ms"] > 0:
        assert report["per_row_vs_k1"]["2"] == pytest.approx(
            report["fit"]["2"]["per_row_ms"] / report["fit"]["1"]["per_row_ms"], rel=0.01, abs=0.002)


def test_a_bad_flag_is_one_line_before_any_work():
    command = [sys.executable, os.path.join(ROOT, "benchmarks", "step_rows.py"), "--hypotheses=0,5"]
    finished = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert finished.returncode != 0
    assert "--hypotheses=0,5: expected integers >= 1" in finished.stderr
