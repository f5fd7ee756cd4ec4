"""zoo: attention-based neural machine translation for Keras 3 and TensorFlow.

`import zoo` is cheap: each subpackage is imported the first time it is used
(`zoo.layers.AdditiveAttention`, `zoo.models.build`, ...), so `import zoo.constants`
does not pull in TensorFlow and `import zoo.layers` only Keras (docs/contract.md).
"""

import importlib as _importlib
import os as _os

# From the data to the exported model (docs/interfaces.md), then training and the facts shared by all.
SUBPACKAGES = (
    "data", "layers", "models", "decoding", "inference", "export", "metrics", "training", "plot", "constants",
)  # fmt: skip

# `from zoo import *` takes the subpackages this installation has.
__all__ = [
    name for name in SUBPACKAGES
    if _os.path.exists(_os.path.join(_os.path.dirname(__file__), name))
    or _os.path.exists(_os.path.join(_os.path.dirname(__file__), f"{name}.py"))
]  # fmt: skip


def __getattr__(name):
    if name in SUBPACKAGES:
        return _importlib.import_module(f"{__name__}.{name}")  # also binds zoo.<name> for next time
    raise AttributeError(f"module 'zoo' has no attribute {name!r}; expected one of {list(SUBPACKAGES)}")


def __dir__():
    return sorted(set(globals()) | set(SUBPACKAGES))
