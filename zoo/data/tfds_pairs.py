"""Parallel text from TensorFlow Datasets: a translation dataset by name, as sentence pairs.

`tensorflow-datasets` is an optional dependency (`pip install 'zoo-nmt[tfds]'`), imported
only when a TFDS dataset is asked for.
"""

from zoo.data.tsv import DataError


def import_tfds():
    """The `tensorflow_datasets` module; `ImportError` with one line naming the package if missing."""
    try:
        import tensorflow_datasets  # noqa: PLC0415  optional and slow to import
    except ImportError as error:
        raise ImportError(
            f"TFDS datasets need TensorFlow Datasets, which cannot be imported ({error}); install "
            f"it with: pip install tensorflow-datasets (or pip install 'zoo-nmt[tfds]')"
        ) from None
    return tensorflow_datasets


def tfds_pairs(name, split="train", *, data_dir=None, reverse=False, download=True):
    """Yields the (source, target) sentence pairs of a TFDS translation dataset.

    The sides are the dataset's supervised keys: `ted_hrlr_translate/pt_to_en` gives
    (Portuguese, English), `wmt14_translate/de-en` (German, English). Pairs with an empty
    side after stripping are left out, as in a TSV file.

    Args:
      name: a TFDS name with its config, e.g. "ted_hrlr_translate/pt_to_en".
      split: "train", "validation", "test", or a TFDS slice such as "train[:10%]".
      data_dir: where TFDS keeps its data (its default if None).
      reverse: swap the sides (en->de from `wmt14_translate/de-en`).
      download: download and prepare the dataset if it is not in `data_dir` yet.

    Yields:
      (source, target) str pairs, stripped, in the dataset's order.

    Raises:
      DataError: an unknown dataset or split, or a dataset that is not a translation one.
    """
    tfds = import_tfds()
    try:
        dataset, info = tfds.load(
            name, split=split, data_dir=data_dir, download=download, with_info=True, shuffle_files=False
        )
    except (tfds.core.registered.DatasetNotFoundError, ValueError, AssertionError) as error:
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise DataError(f"TFDS dataset {name!r} split {split!r}: {reason}") from None
    keys = info.supervised_keys
    if not (
        isinstance(keys, tuple) and len(keys) == 2
        and all(isinstance(k, str) and isinstance(info.features[k], tfds.features.Text) for k in keys)
    ):  # fmt: skip
        raise DataError(
            f"TFDS dataset {name!r}: expected a translation dataset, whose supervised keys are "
            f"two text features (languages), got {keys!r}"
        )
    source_key, target_key = reversed(keys) if reverse else keys
    for example in tfds.as_numpy(dataset):
        source = example[source_key].decode("utf-8", errors="replace").strip()
        target = example[target_key].decode("utf-8", errors="replace").strip()
        if source and target:
            yield source, target
