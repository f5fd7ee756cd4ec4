"""The inputs of a recipe's run: its pairs, its tokenizers, its batches and its model."""

import os

import zoo.models
from zoo import data
from zoo.atomic_write import atomic_directory
from zoo.data import datasets
from zoo.data.pipeline import make_dataset
from zoo.progress import Progress
from zoo.training.precision import resolve_precision


def load_data(config):
    """The training and dev pairs of the recipe's dataset: `{"train": [(src, tgt), ...], "dev": [...]}`.

    See `zoo.data.datasets` (a training file always means dataset `tsv`).

    Raises:
      DataError: an unknown dataset, missing or malformed files, an empty split.
    """
    return datasets.load(config)


def build_tokenizers(config, train_pairs, vocab_dir, show_progress=None):
    """Loads the tokenizers saved in `vocab_dir`, or builds them from the training pairs and saves them.

    `show_progress`: None reports the sentences read on a terminal (`zoo.progress`), False never.

    Returns:
      `(source_tokenizer, target_tokenizer)`.
    """
    tokenizers = []
    for side, kind, size, column in (
        ("source", config.source_tokenizer, config.source_vocab_size, 0),
        ("target", config.target_tokenizer, config.target_vocab_size, 1),
    ):
        path = os.path.join(vocab_dir, side)
        if os.path.isfile(os.path.join(path, "tokenizer.json")):  # written last by `save`
            tokenizer = data.load_tokenizer(path)
        else:
            if kind not in data.tokenizer_types():
                raise ValueError(f"unknown {side}_tokenizer {kind!r}; expected one of {data.tokenizer_types()}")
            with Progress(f"{side} vocabulary", total=len(train_pairs), unit="sentences",
                          enabled=show_progress) as report:
                tokenizer = data.build_tokenizer(
                    kind, report.wrap(pair[column] for pair in train_pairs), max_size=size or None,
                    min_count=config.vocab_min_count, lowercase=config.lowercase,
                )
            with atomic_directory(path) as temporary:  # a kill leaves all the tokenizer's files or none
                tokenizer.save(temporary)
        tokenizers.append(tokenizer)
    return tuple(tokenizers)


def make_train_dataset(config, pairs, source_tokenizer, target_tokenizer, seed, static_shapes=False):
    """The training batches `((source_ids, target_in_ids), target_out_ids)`; see `make_dataset`."""
    return make_dataset(
        pairs, source_tokenizer, target_tokenizer, config.batch_size,
        max_source_length=config.max_source_length or None,
        max_target_length=config.max_target_length or None,
        shuffle=True, seed=seed, drop_long=config.drop_long, static_shapes=static_shapes,
    )


def build_model(config, source_vocab_size, target_vocab_size):
    """The preset `config.model` with the config's sizes (those the preset takes)."""
    overrides = zoo.models.recipe_overrides(config.model, config)
    dtype = resolve_precision(config.precision)
    return zoo.models.build(config.model, source_vocab_size, target_vocab_size, dtype=dtype, **overrides)
