"""Session fixtures of the export tests: the tiny model (see export_test_model.py) and one export."""

import os

import pytest
import tensorflow as tf

from export_test_model import build_parts, write_export


@pytest.fixture(scope="session")
def parts():
    """`(model, source_tokenizer, target_tokenizer)`."""
    return build_parts()


@pytest.fixture(scope="session")
def export_base(parts, tmp_path_factory):
    """A model base path holding the tiny model's export as version 1."""
    base = str(tmp_path_factory.mktemp("export"))
    write_export(base, parts)
    return base


@pytest.fixture(scope="session")
def export_path(export_base):
    return os.path.join(export_base, "1")


@pytest.fixture(scope="session")
def loaded(export_path):
    """The export loaded back in this process."""
    return tf.saved_model.load(export_path)
