"""What `--model PATH` names: SavedModel, base path of versions, workdir with or without export."""

import os

import pytest

from zoo.inference import resolve_model
from zoo.inference.resolve import training_config_path


def touch(path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    open(path, "wb").close()
    return path


def test_a_saved_model_and_the_newest_complete_version_of_a_base_path(tmp_path):
    base = str(tmp_path / "base")
    for version in ("2", "10"):
        touch(os.path.join(base, version, "saved_model.pb"))
    os.makedirs(os.path.join(base, "11"))  # being written: no saved_model.pb yet
    touch(os.path.join(base, ".tmp-12-1", "saved_model.pb"))
    assert resolve_model(base) == ("saved_model", os.path.join(base, "10"))
    assert resolve_model(os.path.join(base, "2")) == ("saved_model", os.path.join(base, "2"))


def test_a_workdir_resolves_to_its_newest_export_or_else_to_itself(tmp_path):
    workdir = str(tmp_path / "run")
    touch(os.path.join(workdir, "best.keras"))
    assert resolve_model(workdir) == ("workdir", workdir)
    touch(os.path.join(workdir, "export", "3", "saved_model.pb"))
    assert resolve_model(workdir) == ("saved_model", os.path.join(workdir, "export", "3"))


def test_anything_else_is_refused_with_what_was_expected(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such directory; expected a SavedModel"):
        resolve_model(str(tmp_path / "missing"))
    (tmp_path / "model.keras").write_text("x")  # zoo-eval --model FILE said "no such directory"
    with pytest.raises(FileNotFoundError, match="model.keras: is a file, not a directory; expected a SavedModel"):
        resolve_model(str(tmp_path / "model.keras"))
    (tmp_path / "model.keras").unlink()
    with pytest.raises(FileNotFoundError, match="found neither saved_model.pb, numeric version directories, nor best.keras"):
        resolve_model(str(tmp_path))


def test_the_training_config_is_found_from_a_workdir_its_export_or_a_version(tmp_path):
    workdir = str(tmp_path / "run")
    config = touch(os.path.join(workdir, "config.json"))
    version = os.path.join(workdir, "export", "1")
    os.makedirs(os.path.join(version, "variables"))
    for path in (workdir, os.path.join(workdir, "export"), version, os.path.join(version, "variables")):
        assert training_config_path(path) == config, path
    assert training_config_path(str(tmp_path)) is None
