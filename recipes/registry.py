"""Finds a recipe by name (`recipes/configs/<name>.py`) or by the path of a config file."""

import importlib
import importlib.util
import os

_CONFIG_DIR = os.path.join(os.path.dirname(__file__), "configs")


def recipe_names():
    """The built-in recipes: every `recipes/configs/*.py` but `base`."""
    return sorted(
        name[:-3]
        for name in os.listdir(_CONFIG_DIR)
        if name.endswith(".py") and not name.startswith("_") and name != "base.py"
    )


def load_config(recipe):
    """The `ml_collections.ConfigDict` of a recipe name or of a `.py` file with `get_config()`.

    Raises:
      ValueError: unknown recipe (the message lists the valid names) or a file without
        `get_config`.
    """
    if recipe.endswith(".py") or os.sep in recipe:
        if not os.path.isfile(recipe):
            raise ValueError(f"recipe file {recipe}: no such file")
        spec = importlib.util.spec_from_file_location(f"zoo_recipe_{abs(hash(recipe))}", recipe)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    elif recipe in recipe_names():
        module = importlib.import_module(f"recipes.configs.{recipe}")
    else:
        raise ValueError(f"unknown recipe {recipe!r}; expected one of {recipe_names()} or a path to a .py config")
    if not hasattr(module, "get_config"):
        raise ValueError(f"recipe {recipe}: expected a module with get_config(), found none")
    return module.get_config()


def get_config(recipe="dates_bahdanau"):
    """Alias of `load_config` with the default recipe: `recipes.get_config("text")`."""
    return load_config(recipe)
