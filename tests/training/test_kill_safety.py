"""kill -9 while zoo-train writes: each file is whole or absent, and the rerun finishes the job once."""

import json
import os
import re
import signal
import subprocess
import sys

import pytest

from zoo.data import load_tokenizer

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KILLER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kill_at_rename.py")
TINY = dict(
    dates_train_size=300, dates_dev_size=8, embedding_dim=8, encoder_units=8, decoder_units=8, attention_units=8,
    output_units=8, batch_size=32, num_epochs=2, final_beam_width=1, num_samples=0, early_stopping_patience=0,
    verbose=0,
)  # fmt: skip


def zoo_train(workdir, kill_at=None):
    """Runs zoo-train on the tiny recipe; with `kill_at`, SIGKILLed before the rename it matches."""
    flags = ["--workdir", workdir, *[f"--config.{key}={value}" for key, value in TINY.items()]]
    command = [KILLER, kill_at] if kill_at else ["-m", "recipes.train"]
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    return subprocess.run([sys.executable, *command, *flags], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600)


def check_whole(workdir):
    """Whatever exists is complete: tokenizers load, JSON parses; no temporary is visible to a reader."""
    for side in ("source", "target"):
        path = os.path.join(workdir, "vocab", side)
        if os.path.exists(path):
            assert load_tokenizer(path).vocab_size > 4
    for name in ("config.json", "results.json"):
        if os.path.exists(os.path.join(workdir, name)):
            with open(os.path.join(workdir, name)) as f:
                json.load(f)
    export_dir = os.path.join(workdir, "export")
    if os.path.isdir(export_dir):
        for version in os.listdir(export_dir):
            if version.isdigit():
                assert os.path.isfile(os.path.join(export_dir, version, "saved_model.pb"))


def temporaries(workdir):
    return [os.path.relpath(os.path.join(root, name), workdir) for root, dirs, files in os.walk(workdir)
            for name in dirs + files if name.startswith(".") and ("tmp" in name)]


@pytest.mark.slow
def test_kill_during_each_write_then_rerun(tmp_path):
    workdir = str(tmp_path / "run")
    # In the order the run writes them: the target vocabulary (the source one is already saved),
    # the best model after epoch 1, the export's version directory, then results.json.
    for kill_at in (r"vocab/target$", r"best\.keras$", r"export/1$", r"results\.json$"):
        killed = zoo_train(workdir, kill_at)
        assert killed.returncode == -signal.SIGKILL, (kill_at, killed.stderr[-3000:])
        check_whole(workdir)
        assert temporaries(workdir), kill_at  # the kill did land inside a write
    assert not os.path.exists(os.path.join(workdir, "results.json"))

    rerun = zoo_train(workdir)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    check_whole(workdir)
    assert temporaries(workdir) == []  # the killed runs' leftovers are gone
    with open(os.path.join(workdir, "results.json")) as f:
        results = json.load(f)
    batches = int(re.search(r"training pairs \((\d+) batches of <= 32\)", rerun.stdout).group(1))
    assert results["epochs"] == 2 and results["train_steps"] == 2 * batches  # nothing lost, nothing done twice
    # The export the killed run completed is the one reported; no second version of the same model.
    assert os.listdir(os.path.join(workdir, "export")) == ["1"]
    assert results["export_path"] == os.path.join(workdir, "export", "1")
