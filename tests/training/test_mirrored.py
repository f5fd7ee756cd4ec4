"""Two replicas on one global batch take the very steps of one device, and resume its run (two logical CPUs);
zoo-train splits the CPU into replicas itself with `cpu_replicas`."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from zoo import machine

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "two_cpu_replicas.py")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _script(*args, timeout=600):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    process = subprocess.run([sys.executable, SCRIPT, *args], env=env, capture_output=True, text=True, timeout=timeout)
    assert process.returncode == 0, process.stderr[-3000:]
    return json.loads(process.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def comparison():
    """One device against two replicas, with static and with per-batch shapes (one process for both)."""
    return _script()


@pytest.mark.slow
def test_mirrored_loss_trajectory_matches_one_device(comparison):
    assert comparison["replicas"] == [1, 2]
    static = comparison["static"]
    assert static["batch_rows"] == [32]
    one, mirrored = np.array(static["one_device"]), np.array(static["mirrored"])
    assert len(one) == len(mirrored) == 20
    assert one[-1] < one[0] - 0.3  # it learns: the trajectory is not flat
    # Keras' own masked mean and per-replica clipping drift apart by ~1e-2 in 10 steps here.
    np.testing.assert_allclose(mirrored, one, rtol=1e-5, atol=1e-6)
    assert static["max_weight_difference"] < 1e-5


@pytest.mark.slow
def test_per_batch_shapes_split_unevenly_and_take_the_same_steps(comparison):
    per_batch = comparison["per_batch"]
    # Batches of 33 and each bucket's partial batch: most split unevenly over two replicas.
    assert len(per_batch["batch_rows"]) > 2 and any(rows % 2 for rows in per_batch["batch_rows"])
    one, mirrored = np.array(per_batch["one_device"]), np.array(per_batch["mirrored"])
    assert one[-1] < one[0] - 0.2
    assert per_batch["max_weight_difference"] < 1e-5  # the very same steps
    # The logged loss is Keras' mean of the replicas' losses weighted by their rows: off a little
    # where a batch splits unevenly, although the step itself is exact.
    np.testing.assert_allclose(mirrored, one, rtol=2e-2)


@pytest.mark.slow
def test_zoo_train_splits_the_cpu_into_replicas(tmp_path):
    workdir = tmp_path / "run"
    command = [sys.executable, "-m", "recipes.train", "--recipe", "dates_bahdanau", "--workdir", str(workdir),
               "--train_steps", "12", "--config.cpu_replicas=2", "--config.dates_train_size=300",
               "--config.dates_dev_size=8", "--config.embedding_dim=16", "--config.encoder_units=16",
               "--config.decoder_units=32", "--config.attention_units=16", "--config.output_units=16",
               "--config.batch_size=33", "--config.final_beam_width=1", "--config.num_samples=1",
               "--config.verbose=0", "--config.export=False"]
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    process = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert process.returncode == 0, process.stderr[-3000:]
    cores = machine.usable_cpus()
    assert (f"strategy mirrored with 2 replica(s) of the CPU's {cores} cores, {max(1, cores // 2)} thread(s) an op, "
            "float32, XLA off, per-batch shapes") in process.stdout
    results = json.loads((workdir / "results.json").read_text())
    assert (results["strategy"], results["replicas"], results["train_steps"]) == ("mirrored", 2, 12)


@pytest.mark.slow
def test_a_one_device_run_resumes_on_two_replicas(tmp_path):
    first, second = _script("--resume", str(tmp_path / "run"))
    assert (first["strategy"], first["replicas"], first["epochs"]) == ("one_device", 1, 1)
    assert (second["strategy"], second["replicas"], second["epochs"]) == ("mirrored", 2, 2)
    # 300 pairs, 32 a batch: 10 or more steps an epoch. Replicas of a CPU keep every bucket's partial
    # batch (per-batch shapes), as one device does: about as many steps in the second epoch as in the first.
    assert second["resumed_from_step"] == first["train_steps"] >= 10
    assert abs((second["train_steps"] - first["train_steps"]) - first["train_steps"]) <= 3
