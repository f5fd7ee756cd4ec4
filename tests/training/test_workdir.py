"""A workdir is trained by one run at a time: a second run on it is refused and changes nothing."""

import os

import pytest
from test_trainer import tiny_config

from zoo.training import train_and_evaluate

fcntl = pytest.importorskip("fcntl")  # where there are no advisory locks, runs are not kept apart


def test_a_second_run_on_a_workdir_in_use_is_refused_and_changes_nothing(tmp_path):
    workdir = str(tmp_path / "run")
    os.makedirs(workdir)
    with open(os.path.join(workdir, "config.json"), "w") as f:
        f.write("{}\n")  # the first run's
    other_run = os.open(workdir, os.O_RDONLY)  # what a zoo-train running in another shell holds
    try:
        fcntl.flock(other_run, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(ValueError, match=rf"workdir {workdir} is in use by another run"):
            train_and_evaluate(tiny_config(train_steps=1), workdir, print_fn=lambda line: None)
        assert os.listdir(workdir) == ["config.json"]
        with open(os.path.join(workdir, "config.json")) as f:
            assert f.read() == "{}\n"
    finally:
        os.close(other_run)
    # Once that run has ended, the same command trains.
    results = train_and_evaluate(tiny_config(train_steps=1, num_epochs=1), workdir, print_fn=lambda line: None)
    assert results["train_steps"] == 1
