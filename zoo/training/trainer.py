"""The training loop of `zoo-train`: `train_and_evaluate(config, workdir) -> results`.

Everything is an importable function so that a notebook runs the same recipe as the
command line. The workdir layout is the one of docs/interfaces.md: `config.json`,
`vocab/{source,target}/`, `checkpoints/` (resume state), `best.keras`, `logs/`,
`results.json`, `attention.png`, `curves.png`, and `export/<version>/` when the caller passes an
`export_fn` (the recipes do: `recipes.train_and_export`).

Resume: the training state (weights, optimizer, completed epochs, best BLEU, early
stopping counter) is saved with `tf.train.CheckpointManager` after each epoch, whose
index file is replaced atomically, so killing the process at any moment and running the
same command again continues after the last completed epoch.
"""

import dataclasses
import os
import shutil
import time

import keras

import zoo.models
from zoo import machine, metrics, plot
from zoo.atomic_write import write_json
from zoo.config_checks import validate_config
from zoo.constants import ATTENTION_PLOT_FILE, CURVES_PLOT_FILE, EVALUATIONS_FILE, SHORTLIST_FILE, VOCAB_DIR
from zoo.inference import KerasTranslator, evaluate
from zoo.models.workdir import decoding_settings
from zoo.training import callbacks as zoo_callbacks
from zoo.training import distribute
from zoo.training.inputs import (  # noqa: F401 (zoo.training's names)
    build_model, build_shortlist, build_tokenizers, load_data, make_train_dataset, save_tokenizers,
)
from zoo.training.optimization import compile_model  # noqa: F401 (zoo.training's names)
from zoo.training.placement import fit, place, prepare
from zoo.training.progress_bar import StepsProgbar
from zoo.training.workdir import check_config, hold_workdir, write_config

# -- the workdir ----------------------------------------------------------------------------


def _show_progress(config):
    """The `show_progress` of the zoo's progress lines: None (on a terminal), or False with verbose=0."""
    return None if config.verbose else False


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
    figure = plot.attention_figure(attention, source_tokens, target_tokens, source=pair[0], target=hypothesis,
                                   title="attention of the greedy translation of a dev sentence")
    return plot.save_figure(figure, os.path.join(workdir, ATTENTION_PLOT_FILE))


class _Budget:
    """`max_train_minutes` over the workdir's runs: each run spends from its start, and records what it has
    spent with every checkpoint (`TrainingState.budget_seconds`), so a resumed run trains for what is left."""

    def __init__(self, minutes, wall_start, state):
        self.minutes, self.wall_start, self.state = minutes, wall_start, state
        self.before = float(state.budget_seconds.numpy())  # spent by the earlier runs
        self.deadline = wall_start + 60 * minutes - self.before if minutes else None

    def record(self):
        self.state.budget_seconds.assign(self.before + time.monotonic() - self.wall_start)

    def spent(self):
        """Whether the earlier runs spent it all (a run that starts trains one batch at least)."""
        return bool(self.minutes) and self.before >= 60 * self.minutes

    def note(self):
        if not self.spent():
            return ""
        return (f" (the runs in this workdir spent {self.before / 60:.1f} of --max_train_minutes={self.minutes:g}; "
                "a larger budget trains on)")


def _callbacks(config, placement, translator, dev_pairs, state, manager, budget, log, steps_per_epoch):
    """The dev evaluation, the step/time limits, TensorBoard and periodic checkpoints of `fit`."""
    eval_pairs = dev_pairs[: config.max_eval_sentences or None]

    def dev_scores():  # decoded by the chief; every worker gets its numbers
        scores = None
        if placement.chief:
            scores = evaluate(translator, eval_pairs, config.eval_beam_width, config.eval_batch_size,
                              config.bleu_tokenize, _show_progress(config))[0]
        if placement.share is None:
            return scores
        bleu, chrf, exact_match = placement.share([scores.bleu, scores.chrf, scores.exact_match] if scores else [0] * 3)
        if scores is None:
            return metrics.Scores(bleu, chrf, exact_match, "", "", len(eval_pairs))
        return dataclasses.replace(scores, bleu=bleu, chrf=chrf, exact_match=exact_match)

    dev_eval = zoo_callbacks.DevEvaluation(
        # Every worker saves (Keras' save creates variables, a collective op); the chief's lands in the workdir.
        dev_scores, state, manager, os.path.join(placement.own_dir, "best.keras"),
        os.path.join(placement.own_dir, "logs", "dev"),
        patience=config.early_stopping_patience, min_delta=config.early_stopping_min_delta,
        target_bleu=config.target_bleu,
        plateau_decay=config.decay_rate if config.lr_schedule == "plateau" else None,
        print_fn=log, before_save=budget.record, history_path=os.path.join(placement.own_dir, EVALUATIONS_FILE),
    )
    limits = zoo_callbacks.TrainingLimits(config.train_steps, budget.deadline, share=placement.share)
    logs = os.path.join(placement.own_dir, "logs")
    # The bar before the dev evaluation: its line is finished when the evaluation reports.
    bar = [StepsProgbar(steps_per_epoch, config.train_steps)] if config.verbose and placement.chief else []
    callbacks = [limits, *bar, dev_eval, zoo_callbacks.StepTensorBoard(logs, update_freq=50)]
    if config.checkpoint_every_steps:
        callbacks.append(zoo_callbacks.PeriodicCheckpoint(
            manager, config.checkpoint_every_steps, lambda: (dev_eval.count_time(), budget.record())))

    return dev_eval, limits, callbacks


def _final_evaluation(config, workdir, model, translator, dev_pairs, log):
    """Scores the best model with beam search on the whole dev set; logs samples; plots attention."""
    best_path = os.path.join(workdir, "best.keras")
    if os.path.isfile(best_path):
        model.set_weights(keras.models.load_model(best_path, compile=False).get_weights())
    scores, hypotheses = evaluate(translator, dev_pairs, config.final_beam_width, config.eval_batch_size,
                                  config.bleu_tokenize, _show_progress(config),
                                  label=f"dev BLEU, beam {config.final_beam_width}")
    log(f"dev ({len(dev_pairs)} sentences, beam {config.final_beam_width}): BLEU {scores.bleu:.2f}, "
        f"chrF {scores.chrf:.2f}, exact match {100 * scores.exact_match:.1f}%")
    log(f"  {scores.bleu_signature}")
    for (source, reference, *_), hypothesis in list(zip(dev_pairs, hypotheses))[: config.num_samples]:
        log(f"  source:     {source}\n  reference:  {reference}\n  hypothesis: {hypothesis}")
    # A dev sentence long enough for the plot to show reordering.
    example = next((pair for pair in dev_pairs if len(pair[0]) >= 12), dev_pairs[0])
    return scores, _plot(translator, example, workdir)


def _results(config, strategy, model, state, scores, dev_eval, attention_path, initial_step, tokens_per_batch):
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
        "strategy": distribute.strategy_name(strategy),
        "replicas": strategy.num_replicas_in_sync,
        "precision": model.dtype_policy.name,
        # Mean real tokens per batch of a full pass times the steps, over the training time
        # (dev evaluations excluded) of all runs of this workdir.
        "train_tokens_per_second": (total_steps * tokens_per_batch / train_seconds) if train_seconds else None,
        "train_seconds": train_seconds,
        "wall_time_seconds": None,
        "train_steps": total_steps,
        "epochs": int(state.epoch.numpy()),
        "resumed_from_step": initial_step,
        "best_dev_bleu_during_training": float(state.best_bleu.numpy()),
        "evaluations": dev_eval.history,
        "attention_plot": attention_path,
        "export_path": None,
        "machine": machine.describe(),  # what the tokens/s were measured on (CPU model, matrix features, load)
    }
    return results


def _export_and_write(config, workdir, results, export_fn, wall_start, log):
    """Runs the export (if any), times it, and writes `results.json`; returns `results`."""
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
    log(f"wrote {results_path}, {results['attention_plot']}, {results['curves_plot']}"
        + (f", export {results['export_path']}" if results["export_path"] else "")
        + f" ({results['wall_time_seconds']:.0f}s wall time)")
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

    Under `config.strategy` (docs/scaling.md) the global batch is split across the
    replicas, and every worker of a cluster runs this same function; only the chief
    writes the workdir, decodes the dev set and exports.

    Returns:
      The results dict written to `workdir/results.json` (the chief's; another worker
      returns its step count only).

    Raises:
      zoo.data.DataError / ValueError: bad data or config (the message says which).
    """
    log = print_fn or (lambda line: print(line, flush=True))
    wall_start = time.monotonic()
    distribute.split_cpu_as_configured(config)  # before TensorFlow runs any op (validation builds layers)
    validate_config(config)
    placement = place(config, workdir)
    splits = load_data(config)
    with hold_workdir(workdir, placement.chief):  # a second run on the workdir is refused while this one runs
        return _train_and_evaluate(config, workdir, placement, splits, log, export_fn, wall_start)


def _train_and_evaluate(config, workdir, placement, splits, log, export_fn, wall_start):
    """`train_and_evaluate` once the data is read, holding the workdir (the chief)."""
    check_config(config, workdir, write=placement.chief)
    keras.utils.set_random_seed(config.seed)
    vocab_dir = os.path.join(placement.own_dir, VOCAB_DIR)
    tokenizers = build_tokenizers(config, splits["train"], vocab_dir, _show_progress(config), save=False)
    run = prepare(config, placement, workdir, splits["train"], tokenizers, log)
    # Past every check: a refused or failed run leaves the workdir's config.json and vocabularies as they were.
    save_tokenizers(tokenizers, vocab_dir)
    if placement.chief:
        write_config(config, workdir)
        table, learned = build_shortlist(config, splits["train"], tokenizers, vocab_dir)  # what the export decodes with
        if learned:
            log(f"  shortlist: k={table.k} target tokens per source token and {table.frequent} frequent ones, "
                f"learned from the training pairs into {VOCAB_DIR}/{SHORTLIST_FILE}")
    model, state = run.model, run.state
    initial_epoch, initial_step = int(state.epoch.numpy()), int(model.optimizer.iterations.numpy())
    log(f"  {len(splits['dev']):,} dev pairs")
    if run.latest:
        log(f"  resuming from {run.latest}: epoch {initial_epoch}, step {initial_step}, "
            f"best dev BLEU {float(state.best_bleu.numpy()):.2f}")

    # The dev set is decoded with the export's caps (the source one is not the training's), so that the
    # best checkpoint is the one with the best dev BLEU its export gives.
    caps = decoding_settings(config)
    translator = KerasTranslator(model, *tokenizers, caps["max_source_length"], caps.get("max_target_length"),
                                 config.length_penalty, beam_stopping=config.get("beam_stopping", "exact"))
    budget = _Budget(config.max_train_minutes, wall_start, state)
    dev_eval, limits, callbacks = _callbacks(config, placement, translator, splits["dev"], state, run.manager,
                                             budget, log, run.steps_per_epoch)
    dev_eval.set_model(model)
    dev_eval.resume_history()
    dev_eval.evaluate_pending()
    done = (int(state.finished.numpy()) or initial_epoch >= config.num_epochs
            or (config.train_steps and initial_step >= config.train_steps) or budget.spent())
    if not done:
        fit(config, placement, run, callbacks)
        for reason in (limits.stop_reason, dev_eval.stop_reason):
            if reason:
                log(f"stopped: {reason}")
    else:
        log("training already finished in this workdir; evaluating the best model" + budget.note())
    if not placement.chief:  # the chief decodes, exports and reports
        shutil.rmtree(placement.own_dir, ignore_errors=True)
        return {"train_steps": int(model.optimizer.iterations.numpy()), "chief": False}

    training_end = time.monotonic()
    scores, attention_path = _final_evaluation(config, workdir, model, translator, splits["dev"], log)
    results = _results(config, placement.strategy, model, state, scores, dev_eval, attention_path, initial_step,
                       run.tokens_per_batch)
    results["curves_plot"] = plot.save_figure(plot.curves_figure(workdir), os.path.join(workdir, CURVES_PLOT_FILE))
    # What max_train_minutes bounds (start to end of training) and what comes after it.
    results["until_training_end_seconds"] = training_end - wall_start
    results["final_evaluation_seconds"] = time.monotonic() - training_end
    return _export_and_write(config, workdir, results, export_fn, wall_start, log)

