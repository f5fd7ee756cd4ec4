"""Recipe: Luong global attention with the general (multiplicative) score on `dates`."""

from recipes.configs import dates_bahdanau


def get_config():
    config = dates_bahdanau.get_config()  # same data, sizes and schedule as the default recipe
    config.recipe = "dates_luong_general"  # the recipe's name, recorded in results.json
    config.model = "luong_general"  # preset from zoo.models.presets()
    return config
