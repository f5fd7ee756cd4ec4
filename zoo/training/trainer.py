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

import os
import time
import warnings

import keras
import tensorflow as tf

import zoo.models
from zoo import data, metrics
from zoo.data import datasets
from zoo.data.pipeline import make_dataset
from zoo.inference import KerasTranslator, evaluate
from zoo.training import callbacks as zoo_callbacks
from zoo.training import plotting
from zoo.training.optimization import compile_model
from zoo.training.precision import resolve_precision
from zoo.training.workdir import check_config, write_json

# -- data -----------------------------------------------------------------------------------


def load_data(config):
    """The training and dev pairs of the recipe's dataset: `{"train": [(src, tgt), ...], "dev": [...]}`.

    See `zoo.data.datasets` (a training file always means dataset `tsv`).

    Raises:
      DataError: an unknown dataset, missing or malformed files, an empty split.
    """
    return datasets.load(config)


def build_tokenizers(config, train_pairs, vocab_dir):
    """Loads the tokenizers saved in `vocab_dir`, or builds them from the training pairs and saves them.

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
            tokenizer = data.build_tokenizer(
                kind, [pair[column] for pair in train_pairs], max_size=size or None,
                min_count=config.vocab_min_count, lowercase=config.lowercase,
            )
            tokenizer.save(path)
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


# -- the workdir ----------------------------------------------------------------------------


def validate_config(config):
    """Fails early, before any data is read, on values that cannot work."""
    zoo.models.check(config.model, **zoo.models.recipe_overrides(config.model, config))  # names the valid values
    resolve_precision(config.precision)  # names the valid policies
    if config.bleu_tokenize not in metrics.BLEU_TOKENIZERS:
        raise ValueError(f"unknown bleu_tokenize {config.bleu_tokenize!r}; expected one of {list(metrics.BLEU_TOKENIZERS)}")
    for field in ("batch_size", "num_epochs"):
        if config[field] < 1:
            raise ValueError(f"{field} must be >= 1, got {config[field]}")


def _export(export_fn, workdir, log):
    """Runs `export_fn(workdir)`; returns `(path, error)`: the trained model stays usable whatever it does."""
    try:
        path = export_fn(workdir)
    except Exception as error:
        log(f"export failed: {type(error).__name__}: {error}")
        return None, f"{type(error).__name__}: {error}"
    return os.fspath(path) if path is not None else None, None


def _plot(translator, pair, workdir):
    """The attention of the model's greedy translation of one dev sentence, as attention.png."""
    (hypothesis,), ((attention, target_ids),) = translator.translate([pair[0]], return_attention=True)
    source_tokens = [t.decode("utf-8") for t in translator.source_tokenizer.tokenize([pair[0]])[0].numpy()]
    source_tokens = source_tokens[: attention.shape[1]]
    target_tokens = [t.decode("utf-8") for t in translator.target_tokenizer.id_to_token(target_ids).numpy()]
    return plotting.plot_attention(attention, source_tokens, target_tokens, os.path.join(workdir, "attention.png"),
                                   title=f"{pair[0]} -> {hypothesis}")


def _callbacks(config, workdir, translator, dev_pairs, state, manager, deadline, log):
    """The dev evaluation, the step/time limits, TensorBoard and periodic checkpoints of `fit`."""
    eval_pairs = dev_pairs[: config.max_eval_sentences or None]
    dev_eval = zoo_callbacks.DevEvaluation(
        lambda: evaluate(translator, eval_pairs, config.eval_beam_width, config.eval_batch_size,
                         config.bleu_tokenize)[0],
        state, manager, os.path.join(workdir, "best.keras"), os.path.join(workdir, "logs", "dev"),
        patience=config.early_stopping_patience, min_delta=config.early_stopping_min_delta,
        target_bleu=config.target_bleu,
        print_fn=(lambda line: log("\n" + line)) if config.verbose == 1 else log,  # after the progress bar
    )
    limits = zoo_callbacks.TrainingLimits(config.train_steps, deadline, state)
    callbacks = [limits, dev_eval, keras.callbacks.TensorBoard(os.path.join(workdir, "logs"), update_freq=50)]
    if config.checkpoint_every_steps:
        callbacks.append(zoo_callbacks.PeriodicCheckpoint(manager, config.checkpoint_every_steps))

    return dev_eval, limits, callbacks


def _restore(config, workdir, model):
    """The training state and its checkpoint manager, restored from the newest checkpoint if any."""
    state = zoo_callbacks.TrainingState()
    checkpoint = tf.train.Checkpoint(model=model, optimizer=model.optimizer, state=state)
    manager = tf.train.CheckpointManager(checkpoint, os.path.join(workdir, "checkpoints"),
                                         max_to_keep=config.checkpoints_to_keep)
    if manager.latest_checkpoint:
        checkpoint.restore(manager.latest_checkpoint).assert_existing_objects_matched()
    return state, manager


def _final_evaluation(config, workdir, model, translator, dev_pairs, log):
    """Scores the best model with beam search on the whole dev set; logs samples; plots attention."""
    best_path = os.path.join(workdir, "best.keras")
    if os.path.isfile(best_path):
        model.set_weights(keras.models.load_model(best_path, compile=False).get_weights())
    scores, hypotheses = evaluate(translator, dev_pairs, config.final_beam_width, config.eval_batch_size,
                                  config.bleu_tokenize)
    log(f"dev ({len(dev_pairs)} sentences, beam {config.final_beam_width}): BLEU {scores.bleu:.2f}, "
        f"chrF {scores.chrf:.2f}, exact match {100 * scores.exact_match:.1f}%")
    log(f"  {scores.bleu_signature}")
    for (source, reference), hypothesis in list(zip(dev_pairs, hypotheses))[: config.num_samples]:
        log(f"  source:     {source}\n  reference:  {reference}\n  hypothesis: {hypothesis}")
    # A dev sentence long enough for the plot to show reordering.
    example = next((pair for pair in dev_pairs if len(pair[0]) >= 12), dev_pairs[0])
    return scores, _plot(translator, example, workdir)


def _results(config, model, state, scores, dev_eval, attention_path, initial_step, tokens_per_batch):
    """The fields of `results.json` known once the final evaluation is done."""
    total_steps, train_seconds = int(model.optimizer.iterations.numpy()), float(state.train_seconds.numpy())
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
        "train_tokens_per_second": (total_steps * tokens_per_batch / train_seconds) if train_seconds else None,
        "train_seconds": float(state.train_seconds.numpy()),
        "wall_time_seconds": None,
        "train_steps": int(model.optimizer.iterations.numpy()),
        "epochs": int(state.epoch.numpy()),
        "resumed_from_step": initial_step,
        "best_dev_bleu_during_training": float(state.best_bleu.numpy()),
        "evaluations": dev_eval.history,
        "attention_plot": attention_path,
        "export_path": None,
    }
    return results


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
    os.makedirs(workdir, exist_ok=True)
    check_config(config, workdir)
    keras.utils.set_random_seed(config.seed)
    source_tokenizer, target_tokenizer = build_tokenizers(config, splits["train"], os.path.join(workdir, "vocab"))

    model = compile_model(build_model(config, source_tokenizer.vocab_size, target_tokenizer.vocab_size), config)
    state, manager = _restore(config, workdir, model)
    initial_epoch, initial_step = int(state.epoch.numpy()), int(model.optimizer.iterations.numpy())

    # Seeded by (seed, epoch): a resumed run sees the same kind of fresh shuffle order.
    dataset = make_train_dataset(config, splits["train"], source_tokenizer, target_tokenizer,
                                 seed=config.seed * 100003 + initial_epoch)
    batches, tokens_per_pass = count_batches(dataset)  # also fills the dataset's token cache
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
    dev_eval, limits, callbacks = _callbacks(config, workdir, translator, splits["dev"], state, manager, deadline, log)
    dev_eval.set_model(model)
    dev_eval.evaluate_pending()
    done = (int(state.finished.numpy()) or initial_epoch >= config.num_epochs
            or (config.train_steps and initial_step >= config.train_steps))
    if not done:
        with warnings.catch_warnings():  # Keras warns that fit's shuffle does not apply to a tf.data input
            warnings.filterwarnings("ignore", message=".*shuffle=True.*was passed")
            model.fit(dataset.repeat(), epochs=config.num_epochs, initial_epoch=initial_epoch,
                      steps_per_epoch=config.steps_per_epoch or batches, callbacks=callbacks, verbose=config.verbose)
        for reason in (limits.stop_reason, dev_eval.stop_reason):
            if reason:
                log(f"stopped: {reason}")
    else:
        log("training already finished in this workdir; evaluating the best model")

    scores, attention_path = _final_evaluation(config, workdir, model, translator, splits["dev"], log)
    results = _results(config, model, state, scores, dev_eval, attention_path, initial_step,
                       tokens_per_pass / batches)
    results["export_path"], export_error = (
        _export(export_fn, workdir, log) if config.export and export_fn is not None else (None, None)
    )
    if export_error:
        results["export_error"] = export_error
    results["wall_time_seconds"] = time.monotonic() - wall_start
    results_path = os.path.join(workdir, "results.json")
    write_json(results_path, results)
    log(f"wrote {results_path}, {attention_path}"
        + (f", export {results['export_path']}" if results["export_path"] else "")
        + f" ({results['wall_time_seconds']:.0f}s wall time)")
    return results

