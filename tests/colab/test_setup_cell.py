"""Each notebook's setup cell leaves the zoo importable in the kernel that ran it, as on a fresh Colab runtime."""

import importlib.metadata
import importlib.util
import os
import sys
import types

import nbformat
import pytest
from IPython.core.inputtransformer2 import TransformerManager

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COLAB = os.path.join(ROOT, "colab")
NOTEBOOKS = sorted(name[:-6] for name in os.listdir(COLAB) if name.endswith(".ipynb"))


class FakeShell:
    """`get_ipython()` for the cell: shell commands are recorded, not run; `%cd` goes to `clone`'s folder."""

    def __init__(self, clone):
        self.clone, self.commands = clone, []

    def system(self, command):
        self.commands.append(command)

    def run_line_magic(self, magic, line):
        if magic == "cd":  # the cell's /content/zoo/colab, in the fake clone
            os.chdir(os.path.join(self.clone, os.path.relpath(line, "/content/zoo")))


@pytest.mark.parametrize("in_colab", [True, False], ids=["colab", "elsewhere"])
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_setup_cell_puts_the_clone_on_the_kernels_path(name, in_colab, tmp_path, monkeypatch):
    # `pip install -e` leaves a .pth file that Python reads when it starts, not in the running kernel.
    clone = str(tmp_path / "zoo")
    os.makedirs(os.path.join(clone, "colab"))
    monkeypatch.chdir(os.path.join(clone, "colab"))
    monkeypatch.setattr(sys, "path", list(sys.path))
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda module, *args: None if module == "zoo"
                        else find_spec(module, *args))  # not installed yet: a fresh runtime
    if in_colab:
        monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))
    else:
        monkeypatch.delitem(sys.modules, "google.colab", raising=False)
    shell = FakeShell(clone)
    setup = nbformat.read(os.path.join(COLAB, f"{name}.ipynb"), as_version=4).cells[1].source
    namespace = {"get_ipython": lambda: shell}
    exec(TransformerManager().transform_cell(setup), namespace)
    assert any("pip install" in command for command in shell.commands)
    if in_colab:  # tensorflow-text of Colab's TensorFlow (IPython expands {TF_MINOR}): the newest replaced it
        assert any('"tensorflow-text=={TF_MINOR}.*"' in command for command in shell.commands), shell.commands
        installed = importlib.metadata.version("tensorflow")
        assert installed.startswith(namespace["TF_MINOR"] + ".") and namespace["TF_MINOR"].count(".") == 1
    assert os.path.abspath(os.getcwd()) == os.path.join(clone, "colab")
    assert clone in sys.path, "the kernel that ran `pip install -e` cannot import the zoo until it restarts"
