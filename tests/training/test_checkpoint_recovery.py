"""Resuming skips a damaged checkpoint for the newest one that reads back (`readable_checkpoint`)."""

import os

import pytest
import tensorflow as tf

from zoo.training.placement import readable_checkpoint


def save_three(directory):
    """Three checkpoints of a counter, saved 1, 2, 3; their paths, oldest first."""
    counter = tf.Variable(0)
    manager = tf.train.CheckpointManager(tf.train.Checkpoint(counter=counter), directory, max_to_keep=3)
    paths = []
    for value in (1, 2, 3):
        counter.assign(value)
        paths.append(manager.save())
    return paths


def counter_of(path):
    return int(tf.train.load_checkpoint(path).get_tensor("counter/.ATTRIBUTES/VARIABLE_VALUE"))


def cut(path):
    data = f"{path}.data-00000-of-00001"
    with open(data, "r+b") as f:
        f.truncate(os.path.getsize(data) // 2)


def test_the_newest_whole_checkpoint_resumes(tmp_path):
    directory, lines = str(tmp_path / "checkpoints"), []
    assert readable_checkpoint(directory, lines.append) is None  # nothing saved yet: train afresh
    paths = save_three(directory)
    assert readable_checkpoint(directory, lines.append) == paths[-1] and lines == []
    cut(paths[-1])
    assert counter_of(readable_checkpoint(directory, lines.append)) == 2
    assert len(lines) == 1 and f"checkpoint {paths[-1]} does not read back (" in lines[0]


def test_a_damaged_checkpoint_list_falls_back_to_the_files(tmp_path):
    directory, lines = str(tmp_path / "checkpoints"), []
    paths = save_three(directory)
    with open(os.path.join(directory, "checkpoint"), "w") as f:  # TensorFlow ignores it: a fresh start
        f.write("not a CheckpointState {")
    assert readable_checkpoint(directory, lines.append) == paths[-1]
    assert "does not list the checkpoints there; taking the newest of their files" in lines[0]
    assert tf.train.get_checkpoint_state(directory) is None  # only the workdir's writer repairs the list
    cut(paths[-1])
    assert readable_checkpoint(directory, lines.append, repair=True) == paths[1]
    repaired = tf.train.get_checkpoint_state(directory)  # so the manager rotates the old files out
    assert repaired.model_checkpoint_path == paths[1]
    assert list(repaired.all_model_checkpoint_paths) == [paths[0], paths[2], paths[1]]
    manager = tf.train.CheckpointManager(tf.train.Checkpoint(counter=tf.Variable(4)), directory, max_to_keep=1)
    kept = manager.save()
    indexes = sorted(name for name in os.listdir(directory) if name.endswith(".index"))
    assert indexes == [f"{os.path.basename(kept)}.index"]  # the old files, damaged one included, rotated out


@pytest.mark.parametrize("content", ["", 'model_checkpoint_path: "ckpt-99"\nall_model_checkpoint_paths: "ckpt-99"\n'],
                         ids=["empty", "names_a_missing_one"])
def test_a_list_with_no_readable_checkpoint_falls_back_to_the_files(tmp_path, content):
    # An empty list (a disk that filled up) stopped the run ("Invalid checkpoint state loaded from ..."), and
    # one naming only a missing checkpoint with "no checkpoint ... reads back", beside whole ckpt-N files.
    directory, lines = str(tmp_path / "checkpoints"), []
    paths = save_three(directory)
    with open(os.path.join(directory, "checkpoint"), "w") as f:
        f.write(content)
    assert readable_checkpoint(directory, lines.append, repair=True) == paths[-1]
    listed = "a checkpoint that reads back" if content else "the checkpoints there"
    assert f"does not list {listed}; taking the newest of their files" in lines[-1]
    assert tf.train.get_checkpoint_state(directory).model_checkpoint_path == paths[-1]  # the list repaired


def test_none_readable_is_an_error_not_a_fresh_start(tmp_path):
    directory = str(tmp_path / "checkpoints")
    for path in save_three(directory):
        cut(path)
    with pytest.raises(ValueError, match=rf"no checkpoint in {directory} reads back; delete it to train afresh"):
        readable_checkpoint(directory, lambda line: None)
