"""`dates`: the built-in task (zoo/data/dates.py), generated on the spot; nothing to download."""

from zoo.data.dates import DEFAULT_LANGUAGES, dates_splits
from zoo.data.datasets.registry import register
from zoo.data.tsv import DataError

FIELDS = {
    "dates_train_size": 20000,  # generated training pairs (dataset "dates")
    "dates_dev_size": 1000,  # generated dev pairs (dates disjoint from training)
    "dates_seed": 0,  # the generator's seed: same seed, same pairs
    "dates_languages": ",".join(DEFAULT_LANGUAGES),  # comma-separated source languages of `dates`
}


@register("dates", FIELDS, resume_fields=("dates_seed", "dates_languages"))
def load(config):
    """Generated train and dev pairs whose dates are disjoint (`zoo.data.dates_splits`)."""
    if config.get("dev_tsv"):
        raise DataError("--dev_tsv needs --train_tsv (the dates recipe generates both splits)")
    languages = tuple(lang.strip() for lang in config.dates_languages.split(",") if lang.strip())
    splits = dates_splits(seed=config.dates_seed, train=config.dates_train_size, dev=config.dates_dev_size,
                          test=0, languages=languages)
    return {"train": splits["train"], "dev": splits["dev"]}
