"""Recipe: Luong global attention with the dot score on `dates`."""

from recipes.configs import dates_bahdanau


def get_config():
    config = dates_bahdanau.get_config()  # same data, sizes and schedule as the default recipe
    config.recipe = "dates_luong_dot"  # the recipe's name, recorded in results.json
    config.model = "luong_dot"  # preset from zoo.models.presets()
    config.decoder_units = 128  # the dot score needs decoder_units == 2 * encoder_units
    return config
