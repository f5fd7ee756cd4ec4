"""Recipe: Luong attention with a reduced-rank bilinear score on `dates`."""

from recipes.configs import dates_bahdanau


def get_config():
    config = dates_bahdanau.get_config()  # same data, sizes and schedule as the default recipe
    config.recipe = "dates_reduced_rank"  # the recipe's name, recorded in results.json
    config.model = "reduced_rank"  # preset from zoo.models.presets()
    config.attention_rank = 16  # rank of (Q s)^T (R h); the full bilinear form would be 128 x 128
    return config
