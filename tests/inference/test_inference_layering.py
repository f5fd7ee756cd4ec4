"""Who imports whom, read from the source with `ast`: the chain data -> layers -> models -> decoding ->
{inference, export} -> recipes (docs/interfaces.md), training beside it without export, serving/ with
the constants only, and the start-up paths of zoo-translate and zoo-eval without TensorFlow or Keras."""

import ast
import os
import sys

import pytest

import zoo.constants

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# What the start-up paths of `zoo-translate` and `zoo-eval` may import at module level (no TensorFlow, no Keras).
LIGHT_MODULES = ("zoo/inference/__init__.py", "zoo/inference/resolve.py", "zoo/inference/batching.py",
                 "zoo/inference/loading.py", "zoo/inference/stream.py", "zoo/constants.py", "zoo/cli.py",
                 "zoo/progress.py", "zoo/startup.py", "zoo/data/__init__.py", "zoo/data/tsv.py",
                 "zoo/atomic_write.py", "zoo/inference/evaluation.py", "zoo/metrics.py")
# The packages of the chain, by rank: a package imports only packages of lower rank (and itself).
RANKS = {"zoo.data": 1, "zoo.layers": 2, "zoo.models": 3, "zoo.decoding": 4, "zoo.plot": 4, "zoo.config_checks": 4,
         "zoo.config_combinations": 3, "zoo.inference": 5, "zoo.export": 5, "zoo.training": 6, "recipes": 7}
# Modules without TensorFlow that any package may use (they import none of the chain).
FOUNDATION = {"zoo.constants", "zoo.atomic_write", "zoo.progress", "zoo.cli", "zoo.metrics", "zoo.startup",
              "zoo.machine", "zoo.model_defaults"}
# Pairs the ranks allow but the design does not (docs/interfaces.md).
FORBIDDEN = {("zoo.training", "zoo.export"), ("zoo.inference", "zoo.export"), ("zoo.export", "zoo.inference")}
SERVING_MAY_IMPORT = {"zoo.constants"}


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


def package_of(module):
    """The chain package or foundation module a dotted name belongs to, or None (outside the zoo)."""
    parts = module.split(".")
    if parts[0] == "recipes":
        return "recipes"
    if parts[0] != "zoo" or len(parts) < 2:
        return None
    name = ".".join(parts[:2])
    return name if name in RANKS or name in FOUNDATION else None


def wrong_imports(folder):
    """`(file, its package, imported package)` for every import that runs against the chain."""
    found = []
    for path in python_files(folder):
        own = package_of(path[:-3].replace(os.sep, "."))
        for name in imports(path):
            other = package_of(name)
            if other is None or other == own:
                continue
            if own in FOUNDATION:
                allowed = other in FOUNDATION and other != "zoo.cli" or (own, other) == ("zoo.cli", "zoo.progress")
            else:
                allowed = other in FOUNDATION or RANKS[other] < RANKS[own]
            if not allowed or (own, other) in FORBIDDEN:
                found.append((path, own, other))
    return sorted(set(found))


@pytest.mark.parametrize("folder", ["zoo", "recipes"])
def test_every_import_follows_the_chain(folder):
    assert wrong_imports(folder) == []


def test_the_chain_check_sees_a_wrong_import(tmp_path, monkeypatch):
    # A module of zoo/data that imports the models, and one of training that imports the export.
    monkeypatch.setattr(sys.modules[__name__], "ROOT", str(tmp_path))
    for path, text in (("zoo/data/bad.py", "from zoo.models import seq2seq\n"),
                       ("zoo/training/bad.py", "import zoo.export.writer\n"),
                       ("zoo/models/fine.py", "from zoo.data import vocabulary\nfrom zoo import constants\n")):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    assert wrong_imports("zoo") == [("zoo/data/bad.py", "zoo.data", "zoo.models"),
                                    ("zoo/training/bad.py", "zoo.training", "zoo.export")]


def test_every_package_of_the_zoo_has_a_place_in_the_chain():
    packages = {name for name in os.listdir(os.path.join(ROOT, "zoo")) if not name.startswith(("_", "."))}
    placed = {name.split(".")[1] + ("" if os.path.isdir(os.path.join(ROOT, "zoo", name.split(".")[1])) else ".py")
              for name in set(RANKS) | FOUNDATION if name.startswith("zoo.")}
    assert packages == placed


def test_serving_imports_only_the_constants():
    found = {name for path in python_files("serving") for name in imports(path) if name.split(".")[0] == "zoo"}
    found.discard("zoo")  # `from zoo import constants` names the package, and `zoo.constants` (checked)
    allowed = tuple(SERVING_MAY_IMPORT) + tuple(f"{module}." for module in SERVING_MAY_IMPORT)
    assert [name for name in found if not name.startswith(allowed)] == []
    assert found, "serving/ should read the version rule and file names from zoo.constants"


def light(name):
    """Whether `name` is one of LIGHT_MODULES (a module file, not a package) or a name of one."""
    modules = {path[:-3].replace("/", ".") for path in LIGHT_MODULES if not path.endswith("__init__.py")}
    return name in modules or name.rpartition(".")[0] in modules


@pytest.mark.parametrize("path", LIGHT_MODULES)
def test_the_start_up_paths_import_neither_tensorflow_nor_keras(path):
    heavy = {name for name in imports(path, top_level_only=True)
             if name.split(".")[0] in ("tensorflow", "keras", "numpy", "ml_collections")
             or name.startswith(("zoo.models", "zoo.data", "zoo.training", "zoo.export")) and not light(name)}
    assert heavy == set(), path
