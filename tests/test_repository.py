"""The project speaks of itself only: every document it cites is in the repository."""

import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEXT_SUFFIXES = (".py", ".md", ".txt", ".config", ".ini", ".cfg", ".toml", ".yml", ".yaml", ".ipynb")
SKIPPED_DIRS = {".git", "__pycache__", ".pytest_cache", "build", "dist", "runs"}
# Pieces joined here so that this file does not match itself.
OUTSIDE = ("CONTRACT" + ".md", "../" + "shared", "/work" + "/")


def project_files():
    for directory, subdirectories, files in os.walk(ROOT):
        subdirectories[:] = [d for d in subdirectories if d not in SKIPPED_DIRS and not d.endswith(".egg-info")]
        for name in files:
            if name.endswith(TEXT_SUFFIXES) or name == "run":
                yield os.path.join(directory, name)


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def test_nothing_points_outside_the_repository():
    found = [
        f"{os.path.relpath(path, ROOT)}: {needle}"
        for path in project_files() for needle in OUTSIDE if needle in read(path)
    ]  # fmt: skip
    assert not found, found


def test_every_cited_doc_exists():
    cited = {match for path in project_files() for match in re.findall(r"\bdocs/[\w-]+\.md\b", read(path))}
    assert "docs/contract.md" in cited
    missing = sorted(doc for doc in cited if not os.path.isfile(os.path.join(ROOT, doc)))
    assert not missing, missing


def test_every_relative_markdown_link_resolves_from_its_own_file():
    # A link is read from the file's own folder: docs/performance.md once linked `benchmarks/...`,
    # which a reader of docs/ could not open.
    broken = []
    for path in project_files():
        if path.endswith(".md"):
            for target in re.findall(r"\]\(([^)#\s]+)", read(path)):
                if "://" not in target and not os.path.exists(os.path.join(os.path.dirname(path), target)):
                    broken.append(f"{os.path.relpath(path, ROOT)}: {target}")
    assert not broken, broken
