"""The inputs of a recipe's run: its pairs, its tokenizers, its batches and its model."""

import os

import keras

import zoo.models
from zoo import data
from zoo.atomic_write import atomic_directory
from zoo.constants import SHORTLIST_FILE
from zoo.data import datasets
from zoo.data.pipeline import make_dataset, pass_statistics
from zoo.data.shortlist import ShortlistTable, learn_shortlist_from_texts
from zoo.data.tokenizer_kinds import CONFIG_FILE
from zoo.data.tsv_stream import DEFAULT_SHUFFLE_BUFFER, TsvScan, stream_tsv_dataset
from zoo.progress import Progress
from zoo.training import streaming
from zoo.training.precision import resolve_precision


def load_data(config):
    """The training and dev pairs of the recipe's dataset: `{"train": [(src, tgt), ...], "dev": [...]}`.

    See `zoo.data.datasets` (a training file always means dataset `tsv`). A training file read
    as a stream (`config.stream_train`, `zoo.training.streaming`) is a `TsvScan` instead of a list.

    Raises:
      DataError: an unknown dataset, missing or malformed files, an empty split.
    """
    return streaming.load_streamed(config) if streaming.streams(config) else datasets.load(config)


SIDES = ("source", "target")


def tokenizer_options(config, side):
    """The `build` arguments of `side`'s tokenizer: its size, the case, and its kind's own fields."""
    options = {"max_size": config[f"{side}_vocab_size"] or None, "lowercase": config.lowercase}
    if config[f"{side}_tokenizer"] == "sentencepiece":
        return dict(options, model_type=config.spm_model_type, byte_fallback=config.spm_byte_fallback,
                    normalization=config.get("spm_normalization", "nmt_nfkc"))  # older workdirs lack the field
    return dict(options, min_count=config.vocab_min_count)


def build_tokenizers(config, train_pairs, vocab_dir, show_progress=None, save=True):
    """Loads the tokenizers saved in `vocab_dir`, or builds them from the training pairs and saves them.

    `train_pairs`: a list of pairs, or the `TsvScan` of a streamed file, whose sample they are built on.

    Each side's tokenizer lives in `vocab_dir/source` and `vocab_dir/target`; both are built
    before either is saved, so that a side that cannot be built leaves no vocabulary behind. With
    `config.shared_vocab`, one tokenizer is built on the texts of both sides and saved in
    both directories, so that every reader of the per-side layout finds it; a rerun loads it
    once and uses it for both sides again.

    `show_progress`: None reports the sentences read on a terminal (`zoo.progress`), False never.
    `save`: False leaves the saving to `save_tokenizers` (a run saves them once its checks have passed).

    Returns:
      `(source_tokenizer, target_tokenizer)`: the same object twice with `shared_vocab`.

    Raises:
      ValueError: an unknown tokenizer kind, or a saved tokenizer of another kind.
    """
    if isinstance(train_pairs, TsvScan):
        train_pairs = train_pairs.sample
    if config.shared_vocab:
        tokenizer = _saved_or_built(config, "source", train_pairs, vocab_dir, show_progress, shared=True)
        tokenizers = (tokenizer, tokenizer)
    else:
        tokenizers = tuple(_saved_or_built(config, side, train_pairs, vocab_dir, show_progress) for side in SIDES)
    if save:
        save_tokenizers(tokenizers, vocab_dir)
    return tokenizers


def save_tokenizers(tokenizers, vocab_dir):
    """Saves the `(source, target)` tokenizers in `vocab_dir/source` and `vocab_dir/target`, where none is saved
    yet (also after a kill between the two saves)."""
    for side, tokenizer in zip(SIDES, tokenizers):
        path = os.path.join(vocab_dir, side)
        if not os.path.isfile(os.path.join(path, CONFIG_FILE)):  # written last by `save`
            _save(tokenizer, path)


def _saved_or_built(config, side, train_pairs, vocab_dir, show_progress, shared=False):
    """`side`'s tokenizer from `vocab_dir/side`, else built on the training pairs (both sides if `shared`)."""
    path, kind = os.path.join(vocab_dir, side), config[f"{side}_tokenizer"]
    if os.path.isfile(os.path.join(path, CONFIG_FILE)):  # written last by `save`
        tokenizer = data.load_tokenizer(path)
        if tokenizer.kind != kind:
            raise ValueError(f"{path} holds a {tokenizer.kind} tokenizer, not the {kind} of {side}_tokenizer; "
                             "expected the config it was trained with, or a new --workdir")
        return tokenizer
    if kind not in data.tokenizer_types():
        raise ValueError(f"unknown {side}_tokenizer {kind!r}; expected one of {data.tokenizer_types()}")
    label, unit = ("shared vocabulary", "sentence pairs") if shared else (f"{side} vocabulary", "sentences")
    field = "source_vocab_size and target_vocab_size" if shared else f"{side}_vocab_size"
    try:
        with Progress(label, total=len(train_pairs), unit=unit, enabled=show_progress) as report:
            pairs = report.wrap(train_pairs)
            if shared:
                tokenizer = data.build_tokenizer_pair(kind, pairs, shared=True, **tokenizer_options(config, side))[0]
            else:
                column = SIDES.index(side)
                tokenizer = data.build_tokenizer(kind, (pair[column] for pair in pairs),
                                                 **tokenizer_options(config, side))
    except ValueError as error:  # e.g. a sentencepiece size too small for the corpus' characters: which side's
        raise ValueError(f"{label} ({field}={config[f'{side}_vocab_size']}): {error}") from None
    return tokenizer


def _save(tokenizer, path):
    with atomic_directory(path) as temporary:  # a kill leaves all the tokenizer's files or none
        tokenizer.save(temporary)


def build_shortlist(config, train_pairs, tokenizers, vocab_dir):
    """With `config.shortlist_k` > 0, the vocabulary selection table of the training pairs (of a
    streamed file's sample, as its vocabulary) (`zoo.data.shortlist`), read from
    `vocab_dir/shortlist.npz` or learned and saved there (again when `shortlist_k` or
    `shortlist_frequent` changed); None without.

    Returns:
      `(table, learned)`: the `ShortlistTable` (or None) and whether it was learned now.
    """
    if not config.get("shortlist_k"):
        return None, False
    path = os.path.join(vocab_dir, SHORTLIST_FILE)
    wanted = {"k": config.shortlist_k, "frequent": config.shortlist_frequent}
    if os.path.isfile(path):
        table = ShortlistTable.load(path)
        if table.settings() == wanted:
            return table, False
    pairs = train_pairs.sample if isinstance(train_pairs, TsvScan) else train_pairs  # a stream: its sample
    table = learn_shortlist_from_texts([pair[:2] for pair in pairs], *tokenizers, **wanted)
    table.save(path)
    return table, True


def make_train_dataset(config, pairs, source_tokenizer, target_tokenizer, seed, static_shapes=False):
    """The training batches `((source_ids, target_in_ids), target_out_ids)`; see `make_dataset`.

    `pairs`: a list, or the `TsvScan` of a file read as a stream (`stream_tsv_dataset`, with the
    same batching). `config.batch_tokens` > 0 sizes each length bucket's batches by tokens
    instead of `batch_size`; `config.shuffle_buffer_size` 0 shuffles a list whole, a stream
    `DEFAULT_SHUFFLE_BUFFER` pairs at a time.
    """
    options = dict(
        batch_tokens=config.batch_tokens or None,
        max_source_length=config.max_source_length or None,
        max_target_length=config.max_target_length or None,
        shuffle=True, seed=seed, drop_long=config.drop_long, static_shapes=static_shapes,
    )  # fmt: skip
    batch_size, buffer = None if config.batch_tokens else config.batch_size, config.get("shuffle_buffer_size", 0)
    if isinstance(pairs, TsvScan):
        return stream_tsv_dataset(pairs.path, source_tokenizer, target_tokenizer, batch_size,
                                  shuffle_buffer_size=buffer or DEFAULT_SHUFFLE_BUFFER, **options)
    return make_dataset(pairs, source_tokenizer, target_tokenizer, batch_size, shuffle_buffer_size=buffer or None,
                        **options)


def train_batches(config, train, tokenizers, seed, static_shapes):
    """`(dataset, batches, real tokens, pairs)`: the training batches and the counts of one pass over them.

    A list's pass is counted in the graph (which also fills its token cache), `pairs` those its
    batches hold; a streamed file's is estimated on its sample (`streaming.estimated_statistics`),
    never read whole, and `pairs` is None.
    """
    dataset = make_train_dataset(config, train, *tokenizers, seed=seed, static_shapes=static_shapes)
    if not isinstance(train, TsvScan):
        return (dataset, *pass_statistics(dataset, rows=True))
    sample = make_train_dataset(config, train.sample, *tokenizers, seed=seed, static_shapes=static_shapes)
    return (dataset, *streaming.estimated_statistics(sample, train), None)


def build_model(config, source_vocab_size, target_vocab_size):
    """The preset `config.model` with the config's sizes (those the preset takes)."""
    overrides = zoo.models.recipe_overrides(config.model, config)
    dtype = resolve_precision(config.precision)
    model = zoo.models.build(config.model, source_vocab_size, target_vocab_size, dtype=dtype, **overrides)
    if config.get("init_scale", 0.0) > 0:  # OpenNMT-py's param_init: every weight, biases too
        for index, variable in enumerate(model.weights):
            uniform = keras.initializers.RandomUniform(-config.init_scale, config.init_scale,
                                                       seed=config.seed * 100_003 + index)
            variable.assign(uniform(variable.shape, variable.dtype))
    return model
