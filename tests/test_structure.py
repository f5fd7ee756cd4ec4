"""The size rules of the code base (docs/interfaces.md): no module over 300 lines, no function over 80."""

import ast
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGES = ("zoo", "recipes", "serving")
MAX_FILE_LINES, MAX_FUNCTION_LINES = 300, 80


def modules():
    for package in PACKAGES:
        for directory, _, names in os.walk(os.path.join(ROOT, package)):
            for name in sorted(names):
                if name.endswith(".py"):
                    yield os.path.relpath(os.path.join(directory, name), ROOT)


def too_long(path):
    """`(what, lines)` of the file and of each function of `path` past the limits."""
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        source = f.read()
    found = [(path, source.count("\n"))] if source.count("\n") > MAX_FILE_LINES else []
    for node in ast.walk(ast.parse(source, path)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            lines = node.end_lineno - node.lineno + 1
            if lines > MAX_FUNCTION_LINES:
                found.append((f"{path}:{node.lineno} {node.name}", lines))
    return found


@pytest.mark.parametrize("package", PACKAGES)
def test_no_module_or_function_is_past_the_size_limits(package):
    assert [row for path in modules() if path.startswith(package + os.sep) for row in too_long(path)] == []


def test_the_size_check_sees_a_long_function(tmp_path, monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "ROOT", str(tmp_path))
    body = "".join(f"    x{i} = {i}\n" for i in range(MAX_FUNCTION_LINES))
    (tmp_path / "long.py").write_text(f"def f():\n{body}")
    assert too_long("long.py") == [("long.py:1 f", MAX_FUNCTION_LINES + 1)]
