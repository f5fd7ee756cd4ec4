"""benchmarks/dates_presets.py reports an empty source-length bucket instead of failing after the training."""

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.mark.slow
def test_a_long_threshold_past_every_dev_source_leaves_the_long_bucket_empty(tmp_path):
    command = [sys.executable, os.path.join(ROOT, "benchmarks", "dates_presets.py"), "--presets=luong_dot",
               "--train_steps=1", "--long=1000", f"--workdir={tmp_path}"]
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    finished = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
    assert finished.returncode == 0, finished.stderr[-3000:]
    row = json.loads(finished.stdout.strip().splitlines()[-1])
    assert row["long"] == {"sentences": 0, "exact_match": None, "bleu": None}
    assert row["short"]["sentences"] == 1000 and row["short"]["bleu"] is not None
