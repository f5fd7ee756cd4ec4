"""Two replicas on one global batch take the very steps of one device, and resume its run (two logical CPUs)."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "two_cpu_replicas.py")


@pytest.mark.slow
def test_mirrored_loss_trajectory_matches_one_device():
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    process = subprocess.run([sys.executable, SCRIPT], env=env, capture_output=True, text=True, timeout=600)
    assert process.returncode == 0, process.stderr[-3000:]
    result = json.loads(process.stdout.strip().splitlines()[-1])
    assert result["replicas"] == [1, 2]
    one, mirrored = np.array(result["one_device"]), np.array(result["mirrored"])
    assert len(one) == len(mirrored) == 20
    assert one[-1] < one[0] - 0.3  # it learns: the trajectory is not flat
    # Keras' own masked mean and per-replica clipping drift apart by ~1e-2 in 10 steps here.
    np.testing.assert_allclose(mirrored, one, rtol=1e-5, atol=1e-6)
    assert result["max_weight_difference"] < 1e-5


@pytest.mark.slow
def test_a_one_device_run_resumes_on_two_replicas(tmp_path):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    process = subprocess.run([sys.executable, SCRIPT, "--resume", str(tmp_path / "run")], env=env,
                             capture_output=True, text=True, timeout=600)
    assert process.returncode == 0, process.stderr[-3000:]
    first, second = json.loads(process.stdout.strip().splitlines()[-1])
    assert (first["strategy"], first["replicas"], first["epochs"]) == ("one_device", 1, 1)
    assert (second["strategy"], second["replicas"], second["epochs"]) == ("mirrored", 2, 2)
    # 300 pairs, 32 a batch: 10 to 12 steps an epoch (two replicas drop each bucket's partial batch).
    assert second["resumed_from_step"] == first["train_steps"] >= 10
    assert first["train_steps"] + 5 <= second["train_steps"] <= first["train_steps"] + 12
