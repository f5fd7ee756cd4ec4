"""The training loop of `zoo-train`: `train_and_evaluate(config, workdir) -> results`.

Everything is an importable function so that a notebook runs the same recipe as the
command line. The workdir layout is the one of docs/interfaces.md: `config.json`,
`vocab/{source,target}/`, `checkpoints/` (resume state), `best.keras`, `logs/`,
`results.json`, `attention.png`, and `export/<version>/` when the caller passes an
`export_fn` (the recipes do: `recipes.train_and_export`).

Resume: the training state (weights, optimizer, completed epochs, best BLEU, early
stopping counter) is saved with `tf.train.CheckpointManager` after each epoch, whose
index file is replaced atomically, so killing the process at any moment and running the
same command again continues after the last completed epoch.
"""

import json
import os
import time
import warnings

import keras
import tensorflow as tf

import zoo.models
from zoo import data
from zoo.atomic_write import atomic_directory, remove_stale_temporaries, write_json
from zoo.data import DataError, datasets
from zoo.data.pipeline import make_dataset
from zoo.inference import KerasTranslator, evaluate
from zoo.progress import Progress
from zoo.training import callbacks as zoo_callbacks
from zoo.training import plotting
from zoo.training.precision import resolve_precision
from zoo.training.progress_bar import StepsProgbar
from zoo.training.validation import validate_config

# Config fields that fix the data, the vocabulary or the model's shape: a workdir trained
# with other values cannot be resumed.
MODEL_FIELDS = ("model",) + zoo.models.defaults.SIZE_FIELDS + zoo.models.defaults.CHOICE_FIELDS
VOCAB_FIELDS = (
    "source_tokenizer", "target_tokenizer", "source_vocab_size", "target_vocab_size",
    "vocab_min_count", "lowercase",
)  # fmt: skip


# -- data -----------------------------------------------------------------------------------


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


def make_train_dataset(config, pairs, source_tokenizer, target_tokenizer, seed):
    """The training batches `((source_ids, target_in_ids), target_out_ids)`; see `make_dataset`."""
    return make_dataset(
        pairs, source_tokenizer, target_tokenizer, config.batch_size,
        max_source_length=config.max_source_length or None,
        max_target_length=config.max_target_length or None,
        shuffle=True, seed=seed, drop_long=config.drop_long,
    )


def count_batches(dataset):
    """`(batches, real tokens)` of one pass over a dataset; real = non-pad source + target tokens."""
    batches, tokens = 0, 0
    for (source_ids, _), target_out_ids in dataset:
        batches += 1
        tokens += int(tf.math.count_nonzero(source_ids)) + int(tf.math.count_nonzero(target_out_ids))
    return batches, tokens


# -- model and optimization -----------------------------------------------------------------


def build_model(config, source_vocab_size, target_vocab_size):
    """The preset `config.model` with the config's sizes (those the preset takes)."""
    overrides = zoo.models.recipe_overrides(config.model, config)
    dtype = resolve_precision(config.precision)
    return zoo.models.build(config.model, source_vocab_size, target_vocab_size, dtype=dtype, **overrides)


@keras.saving.register_keras_serializable(package="zoo")
class WarmupSchedule(keras.optimizers.schedules.LearningRateSchedule):
    """Linear warmup to `peak`, then constant, inverse square root or exponential decay.

    lr(step) = peak * min(1, step / warmup) * decay(step), never below `minimum`, with
      constant:     decay = 1
      inverse_sqrt: decay = sqrt(warmup / max(step, warmup))  (Vaswani et al., 2017)
      exponential:  decay = rate ** (max(step - warmup, 0) / decay_steps)
    """

    def __init__(self, peak, kind="inverse_sqrt", warmup_steps=0, decay_steps=1000, decay_rate=0.5,
                 minimum=0.0):
        if kind not in ("constant", "inverse_sqrt", "exponential"):
            raise ValueError(f"unknown lr_schedule {kind!r}; expected 'constant', 'inverse_sqrt' or 'exponential'")
        self.peak = float(peak)
        self.kind = kind
        self.warmup_steps = int(warmup_steps)
        self.decay_steps = int(decay_steps)
        self.decay_rate = float(decay_rate)
        self.minimum = float(minimum)

    def __call__(self, step):
        step = keras.ops.cast(step, "float32") + 1.0
        warmup = float(max(self.warmup_steps, 1))
        rate = keras.ops.minimum(1.0, step / warmup)
        if self.kind == "inverse_sqrt":
            rate = rate * keras.ops.sqrt(warmup / keras.ops.maximum(step, warmup))
        elif self.kind == "exponential":
            rate = rate * keras.ops.power(self.decay_rate, keras.ops.maximum(step - warmup, 0.0) / self.decay_steps)
        return keras.ops.maximum(self.peak * rate, self.minimum)

    def get_config(self):
        return dict(peak=self.peak, kind=self.kind, warmup_steps=self.warmup_steps, decay_steps=self.decay_steps,
                    decay_rate=self.decay_rate, minimum=self.minimum)


@keras.saving.register_keras_serializable(package="zoo")
class MaskedAccuracy(keras.metrics.Mean):
    """Share of non-pad target positions whose arg-max prediction is the reference token."""

    def __init__(self, name="accuracy", pad_id=data.vocabulary.PAD_ID, **kwargs):
        super().__init__(name=name, **kwargs)
        self.pad_id = pad_id

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true = keras.ops.cast(y_true, "int32")  # (B, T)
        hits = keras.ops.cast(keras.ops.equal(keras.ops.argmax(y_pred, axis=-1), y_true), "float32")
        mask = keras.ops.cast(keras.ops.not_equal(y_true, self.pad_id), "float32")
        return super().update_state(hits, sample_weight=mask)

    def get_config(self):
        return dict(super().get_config(), pad_id=self.pad_id)


def compile_model(model, config):
    """Adam with gradient clipping and the config's schedule; masked cross-entropy and accuracy."""
    schedule = WarmupSchedule(config.learning_rate, config.lr_schedule, config.warmup_steps,
                              config.decay_steps, config.decay_rate, config.min_learning_rate)
    model.compile(
        optimizer=keras.optimizers.Adam(schedule, clipnorm=config.clipnorm or None),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=data.vocabulary.PAD_ID),
        metrics=[MaskedAccuracy()],
    )
    model.optimizer.build(model.trainable_variables)  # its slots must exist before a restore
    return model


# -- the workdir ----------------------------------------------------------------------------


def check_config(config, workdir):
    """Creates `workdir` and writes `config.json`, refusing a workdir trained with another model or vocabulary.

    Files a killed run was writing (temporaries that never became the file) are removed first.
    """
    os.makedirs(workdir, exist_ok=True)
    for directory in (workdir, os.path.join(workdir, "vocab")):
        remove_stale_temporaries(directory)
    path = os.path.join(workdir, "config.json")
    if os.path.isfile(path):
        with open(path, encoding="utf-8") as f:
            saved = json.load(f)
        changed = [
            f"{field}: {saved.get(field)!r} -> {config[field]!r}"
            for field in MODEL_FIELDS + VOCAB_FIELDS + datasets.resume_fields(config)
            if field in config and field in saved and saved[field] != config[field]
        ]
        if changed and any(os.path.isdir(os.path.join(workdir, d)) for d in ("checkpoints", "vocab")):
            raise ValueError(f"workdir {workdir} holds a run with another model or data ({'; '.join(changed)}); "
                             "expected the same config to resume, or a new --workdir")
    write_json(path, config.to_dict(), sort_keys=True)


def _export(export_fn, workdir, log):
    """Runs `export_fn(workdir)`; returns `(path, error)`: the trained model stays usable whatever it does."""
    try:
        path = export_fn(workdir)
    except Exception as error:
        log(f"export failed: {type(error).__name__}: {error}")
        return None, f"{type(error).__name__}: {error}"
    return os.fspath(path) if path is not None else None, None


def _final_evaluation(config, translator, dev_pairs, workdir, log, show_progress):
    """The best model's scores on the whole dev set with beam search, logged with sample translations."""
    best_path = os.path.join(workdir, "best.keras")
    if os.path.isfile(best_path):
        translator.model.set_weights(keras.models.load_model(best_path, compile=False).get_weights())
    scores, hypotheses = evaluate(translator, dev_pairs, config.final_beam_width, config.eval_batch_size,
                                  config.bleu_tokenize, show_progress, label=f"dev BLEU, beam {config.final_beam_width}")
    log(f"dev ({len(dev_pairs)} sentences, beam {config.final_beam_width}): BLEU {scores.bleu:.2f}, "
        f"chrF {scores.chrf:.2f}, exact match {100 * scores.exact_match:.1f}%")
    log(f"  {scores.bleu_signature}")
    for (source, reference), hypothesis in list(zip(dev_pairs, hypotheses))[: config.num_samples]:
        log(f"  source:     {source}\n  reference:  {reference}\n  hypothesis: {hypothesis}")
    return scores


def _plot(translator, pair, workdir):
    """The attention of the model's greedy translation of one dev sentence, as attention.png."""
    (hypothesis,), ((attention, target_ids),) = translator.translate([pair[0]], return_attention=True)
    source_tokens = [t.decode("utf-8") for t in translator.source_tokenizer.tokenize([pair[0]])[0].numpy()]
    source_tokens = source_tokens[: attention.shape[1]]
    target_tokens = [t.decode("utf-8") for t in translator.target_tokenizer.id_to_token(target_ids).numpy()]
    return plotting.plot_attention(attention, source_tokens, target_tokens, os.path.join(workdir, "attention.png"),
                                   title=f"{pair[0]} -> {hypothesis}")


def train_and_evaluate(config, workdir, print_fn=None, export_fn=None):
    """Trains `config`'s model in `workdir`, resuming from its checkpoint if there is one.

    Args:
      config: an `ml_collections.ConfigDict` recipe (see `recipes/configs/base.py`).
      workdir: the run's directory (created if needed).
      print_fn: where progress lines go (default: stdout, flushed).
      export_fn: `workdir -> export path`, run at the end when `config.export` is set
        (`recipes.train_and_export` passes `zoo.export.export_workdir`); its path is
        `export_path` of the results, a failure is logged and kept as `export_error`.
        None: no export.

    Returns:
      The results dict written to `workdir/results.json`.

    Raises:
      zoo.data.DataError / ValueError: bad data or config (the message says which).
    """
    log = print_fn or (lambda line: print(line, flush=True))
    wall_start = time.monotonic()
    deadline = wall_start + 60 * config.max_train_minutes if config.max_train_minutes else None
    validate_config(config)
    splits = load_data(config)
    check_config(config, workdir)
    keras.utils.set_random_seed(config.seed)
    show_progress = None if config.verbose else False  # verbose=0: no progress of any kind
    vocab_dir = os.path.join(workdir, "vocab")
    source_tokenizer, target_tokenizer = build_tokenizers(config, splits["train"], vocab_dir, show_progress)

    model = compile_model(build_model(config, source_tokenizer.vocab_size, target_tokenizer.vocab_size), config)
    state = zoo_callbacks.TrainingState()
    checkpoint = tf.train.Checkpoint(model=model, optimizer=model.optimizer, state=state)
    manager = tf.train.CheckpointManager(checkpoint, os.path.join(workdir, "checkpoints"),
                                         max_to_keep=config.checkpoints_to_keep)
    if manager.latest_checkpoint:
        checkpoint.restore(manager.latest_checkpoint).assert_existing_objects_matched()
    initial_epoch, initial_step = int(state.epoch.numpy()), int(model.optimizer.iterations.numpy())

    # Seeded by (seed, epoch): a resumed run sees the same kind of fresh shuffle order.
    dataset = make_train_dataset(config, splits["train"], source_tokenizer, target_tokenizer,
                                 seed=config.seed * 100003 + initial_epoch)
    batches, tokens_per_pass = count_batches(dataset)  # also fills the dataset's token cache
    if not batches:
        raise DataError(f"no training pair is left after dropping those longer than max_source_length="
                        f"{config.max_source_length} or max_target_length={config.max_target_length} tokens "
                        f"(drop_long=True); expected longer limits or drop_long=False")
    steps_per_epoch = config.steps_per_epoch or batches
    log(f"zoo-train: recipe {config.recipe}, preset {config.model}, {model.count_params():,} parameters")
    log(f"  data: {len(splits['train']):,} training pairs ({batches} batches of <= {config.batch_size}), "
        f"{len(splits['dev']):,} dev pairs; vocab {source_tokenizer.vocab_size} source / "
        f"{target_tokenizer.vocab_size} target tokens")
    if manager.latest_checkpoint:
        log(f"  resuming from {manager.latest_checkpoint}: epoch {initial_epoch}, step {initial_step}, "
            f"best dev BLEU {float(state.best_bleu.numpy()):.2f}")

    translator = KerasTranslator(model, source_tokenizer, target_tokenizer, config.max_source_length or None,
                                 (config.max_target_length + 1) if config.max_target_length else None,
                                 config.length_penalty)
    eval_pairs = splits["dev"][: config.max_eval_sentences or None]
    dev_eval = zoo_callbacks.DevEvaluation(
        lambda: evaluate(translator, eval_pairs, config.eval_beam_width, config.eval_batch_size,
                         config.bleu_tokenize, show_progress)[0],
        state, manager, os.path.join(workdir, "best.keras"), os.path.join(workdir, "logs", "dev"),
        patience=config.early_stopping_patience, min_delta=config.early_stopping_min_delta,
        target_bleu=config.target_bleu,
        print_fn=log,
    )
    limits = zoo_callbacks.TrainingLimits(config.train_steps, deadline, state)
    # The bar before the dev evaluation: its line is finished when the evaluation reports.
    callbacks = [limits, StepsProgbar(steps_per_epoch, config.train_steps), dev_eval,
                 keras.callbacks.TensorBoard(os.path.join(workdir, "logs"), update_freq=50)]
    if config.checkpoint_every_steps:
        callbacks.append(zoo_callbacks.PeriodicCheckpoint(manager, config.checkpoint_every_steps))

    dev_eval.set_model(model)
    dev_eval.evaluate_pending()
    done = (int(state.finished.numpy()) or initial_epoch >= config.num_epochs
            or (config.train_steps and initial_step >= config.train_steps))
    if not done:
        with warnings.catch_warnings():  # Keras warns that fit's shuffle does not apply to a tf.data input
            warnings.filterwarnings("ignore", message=".*shuffle=True.*was passed")
            model.fit(dataset.repeat(), epochs=config.num_epochs, initial_epoch=initial_epoch,
                      steps_per_epoch=steps_per_epoch, callbacks=callbacks, verbose=config.verbose)
        for reason in (limits.stop_reason, dev_eval.stop_reason):
            if reason:
                log(f"stopped: {reason}")
    else:
        log("training already finished in this workdir; evaluating the best model")
    total_steps, train_seconds = int(model.optimizer.iterations.numpy()), float(state.train_seconds.numpy())
    training_end = time.monotonic()
    scores = _final_evaluation(config, translator, splits["dev"], workdir, log, show_progress)
    # A dev sentence long enough for the plot to show reordering.
    example = next((pair for pair in splits["dev"] if len(pair[0]) >= 12), splits["dev"][0])
    attention_path = _plot(translator, example, workdir)

    results = {
        "recipe": config.recipe,
        "preset": config.model,
        "bleu": scores.bleu,
        "chrf": scores.chrf,
        "bleu_signature": scores.bleu_signature,
        "chrf_signature": scores.chrf_signature,
        "exact_match": scores.exact_match,
        "dev_sentences": scores.sentences,
        "beam_width": config.final_beam_width,
        "params": int(model.count_params()),
        # Mean real tokens per batch of a full pass times the steps, over the training time
        # (dev evaluations excluded) of all runs of this workdir.
        "train_tokens_per_second": (total_steps * tokens_per_pass / batches / train_seconds) if train_seconds else None,
        "train_seconds": float(state.train_seconds.numpy()),
        "wall_time_seconds": None,
        # What max_train_minutes bounds (start to end of training) and what comes after it.
        "until_training_end_seconds": training_end - wall_start,
        "final_evaluation_seconds": time.monotonic() - training_end,
        "export_seconds": None,
        "train_steps": int(model.optimizer.iterations.numpy()),
        "epochs": int(state.epoch.numpy()),
        "resumed_from_step": initial_step,
        "best_dev_bleu_during_training": float(state.best_bleu.numpy()),
        "evaluations": dev_eval.history,
        "attention_plot": attention_path,
        "export_path": None,
    }
    export_start = time.monotonic()
    results["export_path"], export_error = (
        _export(export_fn, workdir, log) if config.export and export_fn is not None else (None, None)
    )
    results["export_seconds"] = time.monotonic() - export_start if results["export_path"] else None
    if export_error:
        results["export_error"] = export_error
    results["wall_time_seconds"] = time.monotonic() - wall_start
    results_path = os.path.join(workdir, "results.json")
    write_json(results_path, results, sort_keys=True)
    log(f"wrote {results_path}, {attention_path}"
        + (f", export {results['export_path']}" if results["export_path"] else "")
        + f" ({results['wall_time_seconds']:.0f}s wall time)")
    return results

