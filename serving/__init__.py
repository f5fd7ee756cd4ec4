"""Serving: TF Serving configs, the `zoo-serve` REST server and the REST client.

The names are resolved on first use (PEP 562): `from serving import TranslationClient` loads the
client (httpx) and not TensorFlow, and `zoo-serve`, which needs the server modules
(`serving.rest_app`, `serving.model_registry`, which import TensorFlow), does not load the client.
"""

import importlib

_LAZY = {
    "Hypothesis": "serving.client",
    "Translation": "serving.client",
    "TranslationClient": "serving.client",
    "ServingError": "serving.errors",
}

__all__ = ["Hypothesis", "Translation", "TranslationClient", "ServingError"]


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module 'serving' has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
