"""`tfds`: a TensorFlow Datasets translation corpus by name (zoo/data/tfds_pairs.py).

    zoo-train --recipe text --config.dataset=tfds --config.tfds_name=ted_hrlr_translate/pt_to_en

Needs `tensorflow-datasets` (`pip install 'zoo-nmt[tfds]'`); TFDS downloads and prepares the
corpus in `tfds_data_dir` the first time, and reads it from there afterwards.
"""

import itertools

from zoo.data.datasets.registry import register
from zoo.data.tfds_pairs import import_tfds, tfds_pairs
from zoo.data.tsv import DataError

FIELDS = {
    "tfds_name": "",  # TFDS name/config of dataset "tfds", e.g. "ted_hrlr_translate/pt_to_en"
    "tfds_data_dir": "",  # where TFDS keeps its data; "" = its default ($TFDS_DATA_DIR or ~/tensorflow_datasets)
    "tfds_train_split": "train",  # the training split, or a TFDS slice such as "train[:10%]"
    "tfds_dev_split": "validation",  # the dev split scored with BLEU/chrF, e.g. "validation[:500]"
    "tfds_reverse": False,  # swap the sides: English->German from "wmt14_translate/de-en"
    "tfds_max_train_pairs": 0,  # keep the first N training pairs of the split; 0 = all
}


@register("tfds", FIELDS, resume_fields=("tfds_name", "tfds_train_split", "tfds_reverse", "tfds_max_train_pairs"))
def load(config):
    """The pairs of `tfds_name`'s train and dev splits, sides in its supervised-keys order (or reversed)."""
    if config.get("dev_tsv"):
        raise DataError("--dev_tsv needs --train_tsv (dataset 'tfds' takes its dev pairs from tfds_dev_split)")
    if not config.tfds_name:
        raise DataError("dataset 'tfds' needs --config.tfds_name, a TFDS translation dataset such as "
                        "ted_hrlr_translate/pt_to_en or wmt14_translate/de-en")
    try:
        import_tfds()
    except ImportError as error:  # its one line, naming the package to install
        raise DataError(str(error)) from None
    train = _pairs(config, config.tfds_train_split, config.tfds_max_train_pairs)
    return {"train": train, "dev": _pairs(config, config.tfds_dev_split)}


def _pairs(config, split, limit=0):
    """The first `limit` (0: all) pairs of one split; a failed download or preparation as one DataError line."""
    pairs = tfds_pairs(config.tfds_name, split, data_dir=config.tfds_data_dir or None, reverse=config.tfds_reverse)
    try:
        return list(itertools.islice(pairs, limit or None))
    except (ImportError, OSError) as error:  # no network, a package the download needs, an unreadable file
        reason = (str(error).strip().splitlines() or [""])[0]
        where = config.tfds_data_dir or "TFDS's data directory"
        raise DataError(f"TFDS dataset {config.tfds_name!r} split {split!r}: cannot download or read it "
                        f"({type(error).__name__}: {reason}); data directory: {where}") from None
