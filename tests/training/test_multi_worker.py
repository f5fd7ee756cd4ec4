"""Two `zoo-train` processes on 127.0.0.1 train one model (TF_CONFIG); only the chief writes; kill and resume."""

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time

import pytest
import tensorflow as tf

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TINY = dict(
    dates_train_size=400, dates_dev_size=16, embedding_dim=16, encoder_units=16, decoder_units=32,
    attention_units=16, output_units=16, batch_size=32, learning_rate=1e-2, warmup_steps=5, final_beam_width=1,
    num_samples=1, verbose=0, early_stopping_patience=0, export=False, strategy="multi_worker",
)  # fmt: skip


def free_ports(count):
    sockets = [socket.socket() for _ in range(count)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def start_workers(workdir, tmp_dirs, *args):
    """One `zoo-train` per worker of a two-worker cluster; worker 0 is the chief."""
    cluster = {"worker": [f"127.0.0.1:{port}" for port in free_ports(2)]}
    flags = ["--workdir", workdir, *[f"--config.{k}={v}" for k, v in TINY.items()], *args]
    processes = []
    for index, tmp_dir in enumerate(tmp_dirs):
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="", TMPDIR=tmp_dir,
                   TF_CONFIG=json.dumps({"cluster": cluster, "task": {"type": "worker", "index": index}}))
        processes.append(subprocess.Popen([sys.executable, "-m", "recipes.train", *flags], cwd=ROOT, env=env,
                                          text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    return processes


def kill(processes):
    for process in processes:
        process.send_signal(signal.SIGKILL)
        process.communicate()


@pytest.mark.slow
def test_two_workers_train_checkpoint_on_the_chief_and_resume(tmp_path):
    workdir = str(tmp_path / "run")
    tmp_dirs = [str(tmp_path / f"tmp{i}") for i in range(2)]
    for directory in tmp_dirs:
        os.makedirs(directory)
    index = os.path.join(workdir, "checkpoints", "checkpoint")
    first = start_workers(workdir, tmp_dirs, "--config.num_epochs=1000")
    deadline = time.monotonic() + 240
    try:
        while not os.path.exists(index):
            for process in first:
                assert process.poll() is None, process.communicate()[1][-3000:]
            assert time.monotonic() < deadline, "no checkpoint after 240 s"
            time.sleep(0.2)
        time.sleep(1.0)  # the other worker saves the same step into its own directory
    finally:
        kill(first)
    assert not os.path.exists(os.path.join(workdir, "results.json"))
    # The chief wrote the workdir (its first dev evaluation too, where it ended within the second slept:
    # best.keras, evaluations.json); the other worker saved its own checkpoints in its temporary directory.
    # A kill in the middle of saving best.keras leaves the atomic writer's hidden temporary, which no reader
    # opens and the resumed run deletes (zoo.atomic_write.remove_stale_temporaries; checked after the resume).
    written = set(os.listdir(workdir))
    leftovers = {name for name in written if re.fullmatch(r"\.best\.keras\.\d+\.\w+\.tmp\.keras", name)}
    written -= leftovers
    assert {"checkpoints", "config.json", "logs", "vocab"} <= written, written
    assert written <= {"checkpoints", "config.json", "logs", "vocab", "best.keras", "evaluations.json"}, written
    assert not [name for name in os.listdir(tmp_dirs[0]) if name.startswith("zoo-")]
    (private,) = [name for name in os.listdir(tmp_dirs[1]) if name.startswith("zoo-")]
    assert private.startswith("zoo-worker-1-") and os.listdir(os.path.join(tmp_dirs[1], private, "checkpoints"))

    reader = tf.train.load_checkpoint(os.path.dirname(index))
    saved_step = int(reader.get_tensor("optimizer/_iterations/.ATTRIBUTES/VARIABLE_VALUE"))
    saved_epoch = int(reader.get_tensor("state/epoch/.ATTRIBUTES/VARIABLE_VALUE"))
    # 400 pairs, 32 a batch, each bucket's partial batch dropped: 10 steps an epoch, every epoch.
    assert saved_epoch >= 1 and saved_step == 10 * saved_epoch
    second = start_workers(workdir, tmp_dirs, "--config.num_epochs=1000", f"--train_steps={saved_step + 3}")
    try:
        outputs = [process.communicate(timeout=240) for process in second]
    finally:
        kill(second)
    for process, (out, err) in zip(second, outputs):
        assert process.returncode == 0, err[-3000:]
        assert re.search(rf"resuming from \S+: epoch \d+, step {saved_step}\b", out), out
    with open(os.path.join(workdir, "results.json")) as f:
        results = json.load(f)
    assert results["strategy"] == "multi_worker" and results["replicas"] == 2
    assert results["resumed_from_step"] == saved_step and results["train_steps"] == saved_step + 3
    assert results["evaluations"][-1]["step"] == saved_step + 3
    assert not [name for name in os.listdir(tmp_dirs[1]) if name.startswith("zoo-")]  # removed at the end
    assert not leftovers & set(os.listdir(workdir))  # the killed chief's temporary, deleted by the resumed run
    assert "dev (16 sentences" in outputs[0][0] and "dev (" not in outputs[1][0]  # only the chief decodes
