"""Every notebook in colab/ runs top to bottom, headless, in smoke mode, from colab/ as in CI."""

import json
import os
import time

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COLAB = os.path.join(ROOT, "colab")
NOTEBOOKS = ("01_quickstart", "02_attention_variants", "03_long_sentences", "04_your_data", "05_serve")
BADGE = "https://colab.research.google.com/github/zoo-nmt/zoo/blob/main/colab/{}.ipynb"
LIMIT_SECONDS = 600  # the goal is 3 minutes each; the limit leaves room for a busy machine


def test_the_five_notebooks_and_nothing_else():
    assert sorted(name[:-6] for name in os.listdir(COLAB) if name.endswith(".ipynb")) == list(NOTEBOOKS)


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_opens_with_what_it_does_a_badge_and_an_install_cell(name):
    notebook = nbformat.read(os.path.join(COLAB, f"{name}.ipynb"), as_version=4)
    intro, setup = notebook.cells[0], notebook.cells[1]
    assert intro.cell_type == "markdown" and BADGE.format(name) in intro.source
    assert len([line for line in intro.source.split("\n\n")[-1].splitlines() if line.strip()]) == 3
    assert setup.cell_type == "code" and "pip install" in setup.source and "ZOO_SMOKE" in setup.source
    assert all(not cell.get("outputs") for cell in notebook.cells if cell.cell_type == "code")  # stored clean


@pytest.mark.slow
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_runs_in_smoke_mode(name, monkeypatch, record_property):
    monkeypatch.setenv("ZOO_SMOKE", "1")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]))
    monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", "3")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    monkeypatch.delenv("MPLBACKEND", raising=False)
    notebook = nbformat.read(os.path.join(COLAB, f"{name}.ipynb"), as_version=4)
    client = NotebookClient(notebook, timeout=LIMIT_SECONDS, kernel_name="python3",
                            resources={"metadata": {"path": COLAB}})
    started, cpu = time.monotonic(), os.times()
    client.execute()
    seconds = time.monotonic() - started
    children = os.times()
    record_property("seconds", seconds)
    print(json.dumps({"notebook": name, "seconds": round(seconds, 1),
                      "child_cpu_seconds": round(children.children_user + children.children_system
                                                 - cpu.children_user - cpu.children_system, 1)}))
    images = [output for cell in notebook.cells if cell.cell_type == "code" for output in cell.get("outputs", [])
              if "image/png" in output.get("data", {})]
    assert images, "every notebook draws at least one figure inline"
    assert seconds < LIMIT_SECONDS
