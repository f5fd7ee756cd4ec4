"""Named datasets for `zoo-train`, picked by the recipe's `dataset` field.

Each module of this package registers one dataset with `register` (its `load(config)`, the
recipe fields it reads and those that fix its pairs); every module here is imported, so
adding a dataset is adding one file.
"""

import importlib
import pkgutil

from zoo.data.datasets.registry import (
    Dataset,
    config_fields,
    dataset_name,
    get,
    load,
    names,
    register,
    resume_fields,
)

for _module in pkgutil.iter_modules(__path__):
    if _module.name != "registry":
        importlib.import_module(f"{__name__}.{_module.name}")

__all__ = ["Dataset", "config_fields", "dataset_name", "get", "load", "names", "register", "resume_fields"]
