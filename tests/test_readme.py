"""Every fenced Python block of README.md runs as written, each in a fresh interpreter."""

import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def python_blocks(path):
    """`(first line number, code)` of every ```python block of a Markdown file."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    return [
        (text.count("\n", 0, match.start()) + 2, match.group(1))
        for match in re.finditer(r"^```python\n(.*?)^```$", text, flags=re.S | re.M)
    ]


BLOCKS = python_blocks(os.path.join(ROOT, "README.md"))


def test_the_readme_has_python_examples():
    assert BLOCKS, "README.md holds no ```python block"


@pytest.mark.parametrize("line, code", BLOCKS, ids=[f"README.md:{line}" for line, _ in BLOCKS])
def test_readme_python_block_runs(line, code, tmp_path):
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    # In a scratch directory: an example that writes files leaves nothing in the checkout.
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                            timeout=300)  # fmt: skip
    assert result.returncode == 0, f"README.md:{line} failed:\n{result.stderr[-3000:]}"
