"""`tsv`: the user's parallel text, `source<TAB>target` per line (zoo/data/tsv.py).

The dev file may give several references, `source<TAB>ref1<TAB>ref2...`: its items are then
`(source, ref1, ref2, ...)`, scored with all of them (training reads the first column only).
"""

import random

from zoo.data.datasets.registry import register
from zoo.data.tsv import DataError, held_out_size, read_tsv, read_tsv_report

FIELDS = {
    "train_tsv": "",  # `source<TAB>target` training file (dataset "tsv"; setting it selects "tsv")
    "dev_tsv": "",  # dev file scored with BLEU/chrF after each evaluation interval (source<TAB>ref1[<TAB>ref2...])
    "max_bad_fraction": 0.1,  # share of malformed TSV lines tolerated (skipped with a warning)
}


@register("tsv", FIELDS, resume_fields=("train_tsv",), selected_by="train_tsv")
def load(config):
    """The pairs of `train_tsv` and `dev_tsv`; without a dev file, a seeded 2% (at most 1000) of train."""
    if not config.train_tsv:
        raise DataError(f"dataset {config.dataset!r} needs --train_tsv (a source<TAB>target file); "
                        "expected dataset 'dates' or a --train_tsv file")
    train = read_tsv(config.train_tsv, max_bad_fraction=config.max_bad_fraction)
    if config.dev_tsv:
        return {"train": train, "dev": read_dev_tsv(config.dev_tsv, config.max_bad_fraction)}
    train = list(train)
    random.Random(config.seed).shuffle(train)
    held_out = held_out_size(len(train))
    if len(train) - held_out < 1:
        raise DataError(f"{config.train_tsv}: {len(train)} pair(s) are too few to hold out a dev set; give --dev_tsv")
    return {"train": train[held_out:], "dev": train[:held_out]}


def read_dev_tsv(path, max_bad_fraction):
    """`(source, ref1, ...)` items of a dev file whose lines may hold several references."""
    report = read_tsv_report(path, max_bad_fraction=max_bad_fraction, multi_reference=True)
    return [(source, *references) for (source, _), references in zip(report.pairs, report.references)]
