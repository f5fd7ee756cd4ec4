"""`import zoo`: every subpackage on first use, and the light ones stay light."""

import os
import subprocess
import sys

import pytest

import zoo

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def imported_after(statement):
    """The top-level modules and zoo subpackages a fresh interpreter holds after `statement`."""
    code = f"{statement}\nimport sys\nprint(' '.join(sorted(sys.modules)))"
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="3")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=300)  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    return set(result.stdout.split())


def test_zoo_and_its_constants_import_neither_tensorflow_nor_keras():
    for statement in ("import zoo", "import zoo.constants", "from zoo import constants"):
        modules = imported_after(statement)
        assert "tensorflow" not in modules and "keras" not in modules, statement
        assert not {m for m in modules if m.startswith("zoo.") and m != "zoo.constants"}, statement


def test_zoo_data_loads_a_module_on_first_use_and_the_tokenizer_kinds_when_one_is_asked_for():
    modules = imported_after("from zoo.data import read_tsv_report, DataError")  # zoo-eval's reader
    assert "tensorflow" not in modules and "zoo.data.char_tokenizer" not in modules
    modules = imported_after("import zoo.data.tokenizer_kinds as k\nassert k.tokenizer_types() == "
                             "['char', 'sentencepiece', 'word'], k.tokenizer_types()")
    assert "zoo.data.char_tokenizer" in modules


def test_zoo_layers_imports_no_other_part_of_the_zoo():
    modules = imported_after("import zoo.layers")
    assert {m.split(".")[1] for m in modules if m.startswith("zoo.")} == {"layers"}


@pytest.mark.parametrize("name", zoo.__all__)
def test_every_subpackage_is_an_attribute_of_zoo(name):
    module = getattr(zoo, name)
    assert module.__name__ == f"zoo.{name}" and name in dir(zoo)


def test_an_unknown_attribute_names_the_subpackages():
    with pytest.raises(AttributeError, match=r"no attribute 'layer'; expected one of \['data', 'layers'"):
        zoo.layer  # noqa: B018
    assert {"data", "layers", "models", "decoding", "export", "metrics", "training", "constants"} <= set(zoo.__all__)
