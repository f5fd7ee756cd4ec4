"""Tokenizer kinds by name: the `type` of `tokenizer.json`, `build_tokenizer`, `load_tokenizer`.

Each `Tokenizer` subclass with a `kind` registers itself here when its module is imported;
the built-in kinds' modules are imported the first time a kind is looked up.
"""

import importlib
import os

from zoo.constants import TOKENIZER_TYPES, read_json_object

CONFIG_FILE = "tokenizer.json"
# The modules of the built-in kinds, `zoo.data.<kind>_tokenizer` (`zoo.data` imports its modules lazily).
_BUILT_IN = tuple(f"zoo.data.{kind}_tokenizer" for kind in TOKENIZER_TYPES)

_KINDS = {}


def register(cls):
    """Makes a tokenizer class known by its `kind` (called by `Tokenizer` for each subclass)."""
    _KINDS[cls.kind] = cls
    return cls


def _known_kinds():
    """`_KINDS`, once the built-in kinds have registered themselves."""
    for module in _BUILT_IN:
        importlib.import_module(module)
    return _KINDS


def tokenizer_types():
    """The tokenizer type names `build_tokenizer` and `tokenizer.json` accept."""
    return sorted(_known_kinds())


def registered_types():
    """`tokenizer_types()` without importing the built-in kinds' modules (they need TensorFlow): their
    names, and those of the kinds registered so far, e.g. by a user's recipe file."""
    return sorted(set(TOKENIZER_TYPES) | set(_KINDS))


def tokenizer_class(kind):
    """The class of a tokenizer kind; `ValueError` listing the known kinds otherwise."""
    if kind not in _known_kinds():
        raise ValueError(f"unknown tokenizer type {kind!r}, expected one of {tokenizer_types()}")
    return _KINDS[kind]


def build_tokenizer(kind, texts, **kwargs):
    """Builds a tokenizer by type name: `build_tokenizer("word", texts, max_size=8000)`."""
    return tokenizer_class(kind).build(texts, **kwargs)


def build_tokenizer_pair(kind, pairs, *, shared=False, **kwargs):
    """The source and target tokenizers of sentence pairs.

    Args:
      kind: a tokenizer type name.
      pairs: a list of (source, target) str pairs (read once per side, twice if not shared).
      shared: one tokenizer built on the texts of both sides and used for both (one
        vocabulary, e.g. for related languages); otherwise one per side.
      **kwargs: the kind's `build` arguments (`max_size`, `lowercase`, ...).

    Returns:
      `(source_tokenizer, target_tokenizer)`; the same object twice when `shared`.
    """
    if shared:
        texts = (text for pair in pairs for text in pair[:2])
        tokenizer = build_tokenizer(kind, texts, **kwargs)
        return tokenizer, tokenizer
    source = build_tokenizer(kind, (pair[0] for pair in pairs), **kwargs)
    target = build_tokenizer(kind, (pair[1] for pair in pairs), **kwargs)
    return source, target


def load_tokenizer(directory):
    """Reads a tokenizer saved with `save` (any kind) from `directory`."""
    config_path = os.path.join(directory, CONFIG_FILE)
    if not os.path.isfile(config_path):
        raise FileNotFoundError(f"{config_path}: no such file (expected a saved tokenizer)")
    config = read_json_object(config_path)
    kind = config.get("type")
    if not isinstance(kind, str) or kind not in _known_kinds():
        raise ValueError(
            f"{config_path}: unknown tokenizer type {kind!r}, expected one of {tokenizer_types()}"
        )
    if not isinstance(config.get("lowercase", False), bool):  # "false" would read as true
        raise ValueError(f"{config_path}: lowercase must be true or false, found {config['lowercase']!r}")
    return _KINDS[kind].from_directory(directory, config)
