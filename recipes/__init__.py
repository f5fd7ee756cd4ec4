"""Named experiment configs (`recipes/configs/*.py`) and the `zoo-train` / `zoo-eval` entry points."""

from recipes.registry import get_config, load_config, recipe_names
