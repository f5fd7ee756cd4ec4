"""Recipe: the no-attention baseline (one fixed context vector) on `dates`, same budget as dates_bahdanau."""

from recipes.configs import dates_bahdanau


def get_config():
    config = dates_bahdanau.get_config()  # same data, sizes and schedule as the default recipe
    config.recipe = "dates_rnnenc"  # the recipe's name, recorded in results.json
    config.model = "rnnenc"  # preset from zoo.models.presets()
    return config
