"""Named experiment configs (`recipes/configs/*.py`) and the `zoo-train` / `zoo-eval` entry points."""

from recipes.pipeline import export_best_model, train_and_export
from recipes.registry import get_config, load_config, recipe_names
