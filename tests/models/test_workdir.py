"""A workdir's config.json is read as a JSON object, or the error names the file."""

import pytest

from zoo.models.workdir import read_config


def test_a_workdir_config_that_is_not_a_json_object_is_named(tmp_path):
    assert read_config(str(tmp_path)).to_dict() == {}  # no config.json: an empty config
    for content, problem in ((b"\xff{", "invalid JSON"), (b"[1]", "expected a JSON object, found list")):
        (tmp_path / "config.json").write_bytes(content)
        with pytest.raises(ValueError, match=rf"config.json: {problem}"):
            read_config(str(tmp_path))
