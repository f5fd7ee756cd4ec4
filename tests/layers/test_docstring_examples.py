"""The Examples of the attention layers' docstrings print what they say, on every backend."""

import doctest

import numpy as np
import pytest

import zoo
import zoo.layers

MODULES = ["additive_attention", "concat_attention", "dot_attention", "general_attention", "reduced_rank_attention",
           "registry"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name, monkeypatch):
    # They printed `((2, 8), (2, 5))` where TensorFlow's shapes print as `(TensorShape([2, 8]), ...)`.
    module = getattr(zoo.layers, name)
    for table in ("_CLASSES", "_ALIASES"):  # registry's example registers a score: gone again after the test
        monkeypatch.setattr(zoo.layers.registry, table, dict(getattr(zoo.layers.registry, table)))
    result = doctest.testmod(module, extraglobs={"np": np, "zoo": zoo}, optionflags=doctest.ELLIPSIS)
    assert result.attempted and not result.failed, result
