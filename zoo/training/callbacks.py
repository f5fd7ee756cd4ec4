"""Keras callbacks of `zoo-train`: dev BLEU, best model, early stopping, limits, resume state."""

import json
import math
import os
import time

import keras
import tensorflow as tf

from zoo.atomic_write import save_model_atomically, write_json
from zoo.training.state import TrainingState  # noqa: F401 (zoo.training and callers import it from here)


class DevEvaluation(keras.callbacks.Callback):
    """After each epoch: dev BLEU/chrF, the best model, early stopping and the checkpoint.

    Adds `dev_bleu`, `dev_chrf`, `dev_exact_match` and `learning_rate` to the epoch logs
    (so the callbacks after it and the History see them), writes them as TensorBoard scalars
    under `logs/dev`, saves the model to `best_path` when BLEU improves, stops training
    after `patience` evaluations without a gain of `min_delta` BLEU or once `target_bleu`
    is reached. The training state is saved with `checkpoint_manager` twice: before the
    evaluation (so that a kill during a long evaluation costs no training) and after it
    (with the new best BLEU and early-stopping counter). A run resumed from the first of
    the two calls `evaluate_pending` to do the missing evaluation.

    Args:
      evaluate_fn: `() -> zoo.metrics.Scores` on the dev set.
      state: the `TrainingState` saved with the checkpoint.
      checkpoint_manager: a `tf.train.CheckpointManager` of model, optimizer and state.
      best_path: where the best model goes (`best.keras`); None saves none.
      log_dir: TensorBoard directory of the dev scalars.
      patience: evaluations without progress before stopping; 0 never stops.
      min_delta: BLEU gain that counts as progress.
      target_bleu: stop once dev BLEU reaches it; 0 never stops.
      plateau_decay: multiply `state.lr_scale` by this after each evaluation without
        progress (the "plateau" schedule); None leaves it alone.
      print_fn: where the one-line evaluation report goes.
      before_save: None, or a function called before each save of the state (the budget spent).
      history_path: None, or a JSON file keeping `history` (every evaluation of every run), written
        before the state that counts its last entry; `resume_history` reads it back.
    """

    def __init__(self, evaluate_fn, state, checkpoint_manager, best_path, log_dir, patience=0, min_delta=0.0,
                 target_bleu=0.0, plateau_decay=None, print_fn=print, before_save=None, history_path=None):
        super().__init__()
        self.history_path = history_path
        self.before_save = before_save
        self.evaluate_fn = evaluate_fn
        self.state = state
        self.checkpoint_manager = checkpoint_manager
        self.best_path = best_path
        self.writer = tf.summary.create_file_writer(log_dir)
        self.patience = patience
        self.min_delta = min_delta
        self.target_bleu = target_bleu
        self.plateau_decay = plateau_decay
        self.print_fn = print_fn
        self.history = []
        self._epoch_start = None
        self.stop_reason = None

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch_start = time.monotonic()

    def count_time(self):
        """Adds the training time since the epoch began or since the last call to `state.train_seconds`: before
        any save of the state, so that a run killed after a checkpoint within an epoch keeps its time too."""
        now = time.monotonic()
        self.state.train_seconds.assign_add(now - self._epoch_start)
        self._epoch_start = now

    def on_epoch_end(self, epoch, logs=None):
        self.count_time()
        self.state.epoch.assign(epoch + 1)
        self.state.evaluated.assign(0)
        self.save()
        self.evaluate(epoch + 1, logs if logs is not None else {})

    def save(self):
        """Saves the state with the checkpoint manager, `before_save` first."""
        if self.before_save is not None:
            self.before_save()
        self.checkpoint_manager.save()

    def resume_history(self):
        """`history` as the earlier runs left it, up to the restored state: an evaluation whose state was not
        saved (the run was killed) is dropped, as `evaluate_pending` does it again. A damaged file is a
        record, not the training's state: it is named in the log and the record starts again."""
        step, evaluated, history = int(self.model.optimizer.iterations.numpy()), int(self.state.evaluated.numpy()), []
        if self.history_path:
            try:
                with open(self.history_path, encoding="utf-8") as f:
                    record = json.load(f)
                # {"evaluations": [...]}; a bare list is the first version's file
                history = record.get("evaluations") if isinstance(record, dict) else record
                if not isinstance(history, list) or not all(isinstance(e, dict) and isinstance(e.get("step"), int)
                                                            for e in history):
                    raise ValueError("expected {\"evaluations\": [...]} with a step in each evaluation")
            except FileNotFoundError:
                history = []
            except ValueError as error:  # UnicodeDecodeError and JSONDecodeError included
                self.print_fn(f"warning: {self.history_path}: {error}; the record of dev evaluations starts again")
                history = []
        self.history = [e for e in history if e["step"] < step or (e["step"] == step and evaluated)]

    def evaluate_pending(self):
        """Evaluates the last completed epoch if a killed run saved it but did not evaluate it."""
        if not int(self.state.evaluated.numpy()):
            self.evaluate(int(self.state.epoch.numpy()), {})

    def evaluate(self, epoch, logs):
        """Dev scores of the current weights after `epoch` epochs; best model; stop; checkpoint."""
        started = time.monotonic()
        scores = self.evaluate_fn()
        eval_seconds = time.monotonic() - started
        step = int(self.model.optimizer.iterations.numpy())
        learning_rate = float(keras.ops.convert_to_numpy(self.model.optimizer.learning_rate))
        logs.update(dev_bleu=scores.bleu, dev_chrf=scores.chrf, dev_exact_match=scores.exact_match,
                    learning_rate=learning_rate)
        # Keras's TensorBoard callback leaves record_if(step % update_freq == 0) active during fit.
        with self.writer.as_default(step=step), tf.summary.record_if(True):
            tf.summary.scalar("bleu", scores.bleu)
            tf.summary.scalar("chrf", scores.chrf)
            tf.summary.scalar("exact_match", scores.exact_match)
            tf.summary.scalar("learning_rate", learning_rate)
        self.writer.flush()

        best = float(self.state.best_bleu.numpy())
        improved = scores.bleu > best
        if improved:
            if self.best_path:
                save_model_atomically(self.model, self.best_path)
            self.state.best_bleu.assign(scores.bleu)
        # Progress is a gain of min_delta over the last evaluation that made progress, not over the best
        # (which any gain moves): steady gains below min_delta each add up to progress.
        reference = float(self.state.progress_bleu.numpy())
        decayed = False
        baseline = reference if reference >= 0 else best  # below 0: the first evaluation, nothing to gain over
        if baseline < 0 or scores.bleu >= baseline + self.min_delta:
            self.state.progress_bleu.assign(scores.bleu)
            self.state.bad_evaluations.assign(0)
        else:
            self.state.bad_evaluations.assign_add(1)
            if self.plateau_decay and self.state.lr_scale is not None:
                self.state.lr_scale.assign(self.state.lr_scale * self.plateau_decay)
                decayed = True
        if self.patience and int(self.state.bad_evaluations.numpy()) >= self.patience:
            self.stop_reason = f"early stopping: no BLEU gain of {self.min_delta} in {self.patience} evaluations"
        elif self.target_bleu and scores.bleu >= self.target_bleu:
            self.stop_reason = f"target BLEU {self.target_bleu} reached"
        if self.stop_reason:
            self.state.finished.assign(1)
            self.model.stop_training = True
        self.history.append(dict(epoch=epoch, step=step, loss=_float(logs.get("loss")),
                                 accuracy=_float(logs.get("accuracy")), eval_seconds=eval_seconds,
                                 **scores.as_dict()))
        if self.history_path:
            write_json(self.history_path, {"evaluations": self.history})
        self.state.evaluated.assign(1)
        self.save()
        self.print_fn(
            f"epoch {epoch} step {step}: dev BLEU {scores.bleu:.2f} chrF {scores.chrf:.2f} "
            f"exact match {100 * scores.exact_match:.1f}% ({eval_seconds:.1f}s)"
            + (" *best*" if improved else "")
            + (f"; learning rate x{self.plateau_decay:g}" if decayed else "")
            + (f"; {self.stop_reason}" if self.stop_reason else "")
        )


def _float(value):
    return None if value is None else float(value)


class StepCounter(keras.callbacks.Callback):
    """Knows the optimizer step after each batch from Keras' batch index, not from the device.

    Reading `optimizer.iterations` would wait for the step to finish on the accelerator;
    the counter reads it once, when training begins.
    """

    def __init__(self):
        super().__init__()
        self.step = 0
        self._epoch_start = 0

    def on_train_begin(self, logs=None):
        self.step = self._epoch_start = int(self.model.optimizer.iterations.numpy())

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch_start = self.step

    def on_train_batch_end(self, batch, logs=None):
        self.step = self._epoch_start + batch + 1  # `batch` is the last step of the execution


class StepTensorBoard(keras.callbacks.TensorBoard):
    """Keras' TensorBoard with its `batch_*` scalars at the optimizer step, as the dev scalars are.

    Keras counts batches from 0 in every `fit`, so a resumed run's training loss went back to step 0.
    """

    def on_train_begin(self, logs=None):
        super().on_train_begin(logs)
        self._global_train_batch = int(self.model.optimizer.iterations.numpy())


LOSS_CHECK_STEPS = 100  # TrainingLimits reads the loss every so many steps (a read waits for the step)


class TrainingLimits(StepCounter):
    """Stops training cleanly at a total step count or a wall-clock deadline.

    Checked after every batch, on the host only; the epoch then ends as usual (dev
    evaluation and checkpoint), so nothing is lost. Several workers must stop at the same
    step: with `share`, the chief's clock decides, every `share_every` steps.

    Args:
      train_steps: stop once the optimizer has made this many steps in all runs; 0 = none.
      deadline: a `time.monotonic()` value after which to stop; None = none.
      share: `[float] -> [float]`, the chief's values on every worker; None in one process.
      share_every: steps between two shared deadline checks.
    """

    def __init__(self, train_steps=0, deadline=None, share=None, share_every=50):
        super().__init__()
        self.train_steps = train_steps
        self.deadline = deadline
        self.share = share
        self.share_every = share_every
        self.stop_reason = None
        self._next_share = 0
        self._next_loss_check = 0

    def _past_deadline(self):
        past = self.deadline is not None and time.monotonic() >= self.deadline
        if self.share is None:
            return past
        if self.step < self._next_share:
            return False
        self._next_share = self.step + self.share_every
        return bool(self.share([float(past)])[0])

    def on_train_batch_end(self, batch, logs=None):
        super().on_train_batch_end(batch, logs)
        if self.step >= self._next_loss_check:  # `step` moves by steps_per_execution
            check_loss(logs, f"at step {self.step}")
            self._next_loss_check = self.step + LOSS_CHECK_STEPS
        if self.train_steps and self.step >= self.train_steps:
            self.stop_reason = f"reached train_steps={self.train_steps}" + (
                f" (at step {self.step}: a host call runs several steps, steps_per_execution)"
                if self.step > self.train_steps else "")
        elif self.deadline is not None and self._past_deadline():
            self.stop_reason = "wall-clock budget (max_train_minutes) spent"
        if self.stop_reason:
            self.model.stop_training = True

    def on_epoch_end(self, epoch, logs=None):  # before the dev evaluation saves the epoch (it comes later)
        check_loss(logs, f"at the end of epoch {epoch + 1} (step {self.step})")


def check_loss(logs, when):
    """Raises a ValueError when the training loss in Keras' `logs` is NaN or infinite: the weights are then
    lost to the run, and what follows (a checkpoint, a best model, an export) would keep them."""
    loss = (logs or {}).get("loss")
    if loss is not None and not math.isfinite(float(loss)):
        raise ValueError(
            f"training diverged: the loss is {float(loss)} {when}; nothing from here on is saved (checkpoints "
            "and best.keras, if any, are from before). A lower learning_rate, clipnorm > 0 or "
            "precision='float32' may help."
        )


class PeriodicCheckpoint(StepCounter):
    """Saves the training state every `every_steps` optimizer steps (within epochs)."""

    def __init__(self, checkpoint_manager, every_steps, before_save=None):
        super().__init__()
        self.checkpoint_manager = checkpoint_manager
        self.every_steps = every_steps
        self.before_save = before_save  # e.g. `DevEvaluation.count_time`
        self._saved = 0

    def on_train_batch_end(self, batch, logs=None):
        super().on_train_batch_end(batch, logs)
        if self.every_steps and self.step // self.every_steps > self._saved // self.every_steps:
            check_loss(logs, f"at step {self.step}")
            if self.before_save is not None:
                self.before_save()
            self.checkpoint_manager.save()
            self._saved = self.step

    def on_train_begin(self, logs=None):
        super().on_train_begin(logs)
        self._saved = self.step
