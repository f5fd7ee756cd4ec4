"""Recipe: Luong global attention with the concat score on `dates`."""

from recipes.configs import dates_bahdanau


def get_config():
    config = dates_bahdanau.get_config()  # same data, sizes and schedule as the default recipe
    config.recipe = "dates_luong_concat"  # the recipe's name, recorded in results.json
    config.model = "luong_concat"  # preset from zoo.models.presets()
    return config
