"""Who imports whom around inference: training never imports the export, inference and export
never import each other, serving/ takes only the constants and zoo.cli, and an export translates without Keras."""

import ast
import os

import pytest

import zoo.constants

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# What the start-up path of `zoo-translate` may import at module level (no TensorFlow, no Keras).
LIGHT_MODULES = ("zoo/inference/__init__.py", "zoo/inference/resolve.py", "zoo/inference/batching.py",
                 "zoo/inference/loading.py", "zoo/inference/stream.py", "zoo/constants.py", "zoo/cli.py",
                 "zoo/progress.py")
# Besides the constants, serving/ may use the command-line layer every command shares (absl and
# the standard library only: LIGHT_MODULES checks it), never the model, data or export code.
SERVING_MAY_IMPORT = {"zoo.constants", "zoo.cli"}


def python_files(folder):
    for directory, _, names in os.walk(os.path.join(ROOT, folder)):
        for name in sorted(names):
            if name.endswith(".py"):
                yield os.path.relpath(os.path.join(directory, name), ROOT)


def imports(path, top_level_only=False):
    """The absolute module names a file imports (`from a import b` gives `a` and `a.b`)."""
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    nodes = tree.body if top_level_only else ast.walk(tree)
    names = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def offending(folder, forbidden):
    return {
        path: sorted(name for name in imports(path) if name == forbidden or name.startswith(forbidden + "."))
        for path in python_files(folder)
        if any(name == forbidden or name.startswith(forbidden + ".") for name in imports(path))
    }


@pytest.mark.parametrize("folder, forbidden", [
    ("zoo/training", "zoo.export"),
    ("zoo/inference", "zoo.export"),
    ("zoo/export", "zoo.inference"),
    ("zoo/models", "zoo.export"),
    ("zoo/models", "zoo.inference"),
])
def test_forbidden_import_directions(folder, forbidden):
    assert offending(folder, forbidden) == {}


def test_serving_imports_only_the_constants_and_the_command_line_layer():
    found = {name for path in python_files("serving") for name in imports(path) if name.split(".")[0] == "zoo"}
    found.discard("zoo")  # `from zoo import cli` names the package, and `zoo.cli` (checked)
    allowed = tuple(SERVING_MAY_IMPORT) + tuple(f"{module}." for module in SERVING_MAY_IMPORT)
    assert [name for name in found if not name.startswith(allowed)] == []
    assert found, "serving/ should read the version rule and file names from zoo.constants"


@pytest.mark.parametrize("path", LIGHT_MODULES)
def test_the_translate_start_up_path_imports_neither_tensorflow_nor_keras(path):
    heavy = {name for name in imports(path, top_level_only=True)
             if name.split(".")[0] in ("tensorflow", "keras", "numpy", "ml_collections")
             or name.startswith(("zoo.models", "zoo.data", "zoo.training", "zoo.export"))}
    assert heavy == set(), path
