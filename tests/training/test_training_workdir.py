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


def test_a_run_refused_before_training_leaves_no_vocabulary_to_block_the_corrected_one(tmp_path):
    workdir = str(tmp_path / "run")
    config = tiny_config(train_steps=1, num_epochs=1, max_source_length=2, max_target_length=2, drop_long=True)
    with pytest.raises(ValueError, match=r"no training pair of \d+ is left after leaving out those longer"):
        train_and_evaluate(config, workdir, print_fn=lambda line: None)
    assert not os.path.exists(workdir)  # neither a vocabulary nor a config of data that never trained, nor the dir
    # Corrected with other data (a field a trained workdir refuses to change): it trains.
    config.update(max_source_length=0, max_target_length=0, drop_long=False, dates_seed=1)
    results = train_and_evaluate(config, workdir, print_fn=lambda line: None)
    assert results["train_steps"] == 1


def test_a_run_that_fails_before_writing_anything_leaves_no_workdir(tmp_path):
    # The dot score's Dq == Dv is known only once the weights are built, after the workdir was made:
    # the refused run left an empty directory behind.
    bad = tiny_config(model="luong_dot", encoder_units=8, decoder_units=24)  # values 16 wide, queries 24
    workdir = str(tmp_path / "new")
    with pytest.raises(ValueError, match="dot attention needs query and value of the same size"):
        train_and_evaluate(bad, workdir, print_fn=lambda line: None)
    assert not os.path.exists(workdir)
    os.makedirs(workdir)  # one the user made stays, empty as it was
    with pytest.raises(ValueError, match="dot attention needs query and value of the same size"):
        train_and_evaluate(bad, workdir, print_fn=lambda line: None)
    assert os.path.isdir(workdir) and os.listdir(workdir) == []
