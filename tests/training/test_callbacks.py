"""zoo-train's callbacks on a tiny Keras model: early stopping, target BLEU, limits, periodic checkpoints."""

import os
import time

import keras
import numpy as np
import pytest
import tensorflow as tf

from zoo.metrics import Scores
from zoo.training import DevEvaluation, TrainingLimits, TrainingState, WarmupSchedule
from zoo.training.callbacks import PeriodicCheckpoint

STEPS_PER_EPOCH = 6


def tiny_model():
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    model.compile(keras.optimizers.SGD(0.01), "mse")
    model.optimizer.build(model.trainable_variables)
    return model


def data():
    return tf.data.Dataset.from_tensor_slices((np.ones((6, 2), "float32"), np.ones((6, 1), "float32"))).batch(1).repeat()


def manager_for(model, state, directory, keep=50):
    checkpoint = tf.train.Checkpoint(model=model, optimizer=model.optimizer, state=state)
    return tf.train.CheckpointManager(checkpoint, str(directory), max_to_keep=keep)


def scripted(bleus):
    """An evaluate_fn returning these dev BLEUs in turn."""
    queue = list(bleus)

    def evaluate():
        bleu = queue.pop(0)
        return Scores(bleu=bleu, chrf=bleu, exact_match=0.0, bleu_signature="s", chrf_signature="s", sentences=1)

    return evaluate


def run_dev_evaluation(tmp_path, bleus, epochs=10, **kwargs):
    model, state = tiny_model(), TrainingState()
    lines = []
    dev_eval = DevEvaluation(scripted(bleus), state, manager_for(model, state, tmp_path / "ckpt"),
                             str(tmp_path / "best.keras"), str(tmp_path / "logs"), print_fn=lines.append, **kwargs)
    model.fit(data(), epochs=epochs, steps_per_epoch=STEPS_PER_EPOCH, callbacks=[dev_eval], verbose=0)
    return dev_eval, state, lines


def test_early_stopping_counts_evaluations_without_a_gain_of_min_delta(tmp_path):
    # 10 -> 10.3 is a new best but not a gain of 0.5 (1 bad), 10.4 neither (2 bad): stop after epoch 3.
    dev_eval, state, lines = run_dev_evaluation(tmp_path, [10.0, 10.3, 10.4, 50.0], patience=2, min_delta=0.5)
    assert [h["epoch"] for h in dev_eval.history] == [1, 2, 3]
    assert [h["step"] for h in dev_eval.history] == [6, 12, 18]
    assert dev_eval.stop_reason == "early stopping: no BLEU gain of 0.5 in 2 evaluations"
    assert float(state.best_bleu.numpy()) == 10.4 and int(state.finished.numpy()) == 1
    assert int(state.bad_evaluations.numpy()) == 2 and int(state.epoch.numpy()) == 3
    assert os.path.isfile(tmp_path / "best.keras")
    assert [line.endswith("*best*") for line in lines[:2]] == [True, True] and "early stopping" in lines[2]


def test_gains_below_min_delta_add_up_to_progress(tmp_path):
    # 10.00 -> 10.06 -> 10.12: each a new best, and 0.12 over two evaluations. Measured against the best of the
    # evaluation before, neither gain reached 0.1 and training stopped after the third.
    dev_eval, state, _ = run_dev_evaluation(tmp_path / "a", [10.0, 10.06, 10.12, 10.13, 10.14], patience=2,
                                            min_delta=0.1, epochs=5)
    assert [h["bleu"] for h in dev_eval.history] == [10.0, 10.06, 10.12, 10.13, 10.14]
    assert dev_eval.stop_reason == "early stopping: no BLEU gain of 0.1 in 2 evaluations"  # 10.13, 10.14
    assert float(state.progress_bleu.numpy()) == 10.12 and float(state.best_bleu.numpy()) == 10.14
    # Without a best model to save, the best BLEU still moves (it stayed -1: every evaluation was progress).
    model, state, lines = tiny_model(), TrainingState(), []
    dev_eval = DevEvaluation(scripted([5.0, 5.0, 5.0, 9.0]), state, manager_for(model, state, tmp_path / "b"), None,
                             str(tmp_path / "logs"), patience=2, min_delta=0.5, print_fn=lines.append)
    model.fit(data(), epochs=4, steps_per_epoch=STEPS_PER_EPOCH, callbacks=[dev_eval], verbose=0)
    assert len(dev_eval.history) == 3 and float(state.best_bleu.numpy()) == 5.0


def test_the_plateau_schedule_decays_after_each_evaluation_without_progress(tmp_path):
    model, state = tiny_model(), TrainingState()
    scale, lines = state.add_lr_scale(), []
    manager = manager_for(model, state, tmp_path / "ckpt")
    dev_eval = DevEvaluation(scripted([10.0, 9.0, 12.0, 12.2]), state, manager, str(tmp_path / "best.keras"),
                             str(tmp_path / "logs"), min_delta=0.5, plateau_decay=0.5, print_fn=lines.append)
    model.fit(data(), epochs=4, steps_per_epoch=STEPS_PER_EPOCH, callbacks=[dev_eval], verbose=0)
    assert float(scale.numpy()) == 0.25  # 9.0 and 12.2 (a best, but not by 0.5) are no progress
    assert [line.endswith("learning rate x0.5") for line in lines] == [False, True, False, True]
    assert float(WarmupSchedule(1e-3, "plateau", warmup_steps=10, scale=scale)(100)) == pytest.approx(2.5e-4)
    restored = TrainingState()  # a resumed run goes on at the decayed rate
    restored_scale = restored.add_lr_scale()
    tf.train.Checkpoint(state=restored).read(manager.latest_checkpoint).expect_partial()
    assert float(restored_scale.numpy()) == 0.25


def test_a_gain_resets_the_patience_and_zero_patience_never_stops(tmp_path):
    dev_eval, _, _ = run_dev_evaluation(tmp_path / "a", [10.0, 10.1, 20.0, 20.1, 20.2, 90.0], patience=2,
                                        min_delta=0.5, epochs=6)
    assert len(dev_eval.history) == 5  # 10.1 bad, 20.0 resets, 20.1 and 20.2 bad: stop at 5
    dev_eval, state, _ = run_dev_evaluation(tmp_path / "b", [5.0, 4.0, 3.0, 2.0], patience=0, epochs=4)
    assert len(dev_eval.history) == 4 and dev_eval.stop_reason is None and int(state.finished.numpy()) == 0


def test_target_bleu_stops_once_reached(tmp_path):
    dev_eval, state, lines = run_dev_evaluation(tmp_path / "a", [50.0, 89.9, 90.0, 99.0], target_bleu=90.0)
    assert len(dev_eval.history) == 3 and dev_eval.stop_reason == "target BLEU 90.0 reached"
    assert int(state.finished.numpy()) == 1 and lines[-1].endswith("; target BLEU 90.0 reached")
    dev_eval, _, _ = run_dev_evaluation(tmp_path / "b", [50.0, 99.0, 100.0], target_bleu=0.0, epochs=3)
    assert len(dev_eval.history) == 3 and dev_eval.stop_reason is None


def test_train_steps_stop_exactly():
    model = tiny_model()
    limits = TrainingLimits(train_steps=8)
    model.fit(data(), epochs=5, steps_per_epoch=STEPS_PER_EPOCH, callbacks=[limits], verbose=0)
    assert int(model.optimizer.iterations.numpy()) == 8
    assert limits.stop_reason == "reached train_steps=8"


def test_train_steps_between_host_calls_say_where_the_run_stopped():
    # With 4 steps a call, train_steps=6 stops at 8: the line said "reached train_steps=6" alone.
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    model.compile(keras.optimizers.SGD(0.01), "mse", steps_per_execution=4)
    limits = TrainingLimits(train_steps=6)
    model.fit(data(), epochs=5, steps_per_epoch=STEPS_PER_EPOCH, callbacks=[limits], verbose=0)
    assert int(model.optimizer.iterations.numpy()) == 8
    assert limits.stop_reason == ("reached train_steps=6 (at step 8: a host call runs several steps, "
                                  "steps_per_execution)")


def test_the_deadline_stops_within_a_step_and_leaves_the_run_resumable():
    model = tiny_model()

    limits = TrainingLimits(deadline=None)

    class SlowSteps(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            if limits.deadline is None:  # 0.3 s from the end of the first (traced) step
                limits.deadline = time.monotonic() + 0.3
            time.sleep(0.05)

    model.fit(data(), epochs=100, steps_per_epoch=STEPS_PER_EPOCH, callbacks=[SlowSteps(), limits], verbose=0)
    late = time.monotonic() - limits.deadline
    steps = int(model.optimizer.iterations.numpy())
    assert 2 <= steps < 600 and 0 <= late < 5, (steps, late)
    assert limits.stop_reason == "wall-clock budget (max_train_minutes) spent"


def test_periodic_checkpoints_hold_the_step_they_were_taken_at(tmp_path):
    model, state = tiny_model(), TrainingState()
    manager = manager_for(model, state, tmp_path)
    model.fit(data(), epochs=2, steps_per_epoch=STEPS_PER_EPOCH, verbose=0,
              callbacks=[PeriodicCheckpoint(manager, every_steps=5)])
    saved = [int(tf.train.load_checkpoint(path).get_tensor("optimizer/_iterations/.ATTRIBUTES/VARIABLE_VALUE"))
             for path in manager.checkpoints]
    assert saved == [5, 10]
    assert PeriodicCheckpoint(manager, every_steps=0).every_steps == 0  # 0 = epoch checkpoints only


def test_a_checkpoint_within_an_epoch_holds_the_training_time_so_far(tmp_path):
    # Only the epoch's end added to train_seconds: a run killed after a checkpoint within an epoch lost that
    # time but kept its steps, and results.json overstated tokens/s (about 1.9x in the report).
    model, state = tiny_model(), TrainingState()
    manager = manager_for(model, state, tmp_path / "ckpt")
    dev_eval = DevEvaluation(scripted([1.0]), state, manager, None, str(tmp_path / "logs"), print_fn=lambda line: None)
    slow = keras.callbacks.LambdaCallback(on_train_batch_end=lambda batch, logs: time.sleep(0.05))
    started = time.monotonic()
    model.fit(data(), epochs=1, steps_per_epoch=STEPS_PER_EPOCH, verbose=0,
              callbacks=[dev_eval, slow, PeriodicCheckpoint(manager, 4, dev_eval.count_time)])
    wall = time.monotonic() - started  # bounds below by what was measured, not by a guess (a busy machine)
    within = tf.train.load_checkpoint(manager.checkpoints[0]).get_tensor("state/train_seconds/.ATTRIBUTES/VARIABLE_VALUE")
    total = float(state.train_seconds.numpy())  # the whole epoch, counted once
    assert 4 * 0.05 <= within < total  # the 4 steps before it, not the epoch
    assert 6 * 0.05 <= total <= wall


def test_the_first_evaluation_is_progress_whatever_min_delta(tmp_path):
    # Measured from a starting BLEU of -1, a first BLEU below min_delta - 1 counted against the patience:
    # the run stopped, or the plateau schedule decayed, after its first evaluation.
    dev_eval, state, lines = run_dev_evaluation(tmp_path, [0.74, 6.0, 6.5, 7.0], patience=1, min_delta=5.0)
    assert [h["bleu"] for h in dev_eval.history] == [0.74, 6.0, 6.5]
    assert "early stopping" not in lines[0] and "early stopping" not in lines[1]
    assert dev_eval.stop_reason == "early stopping: no BLEU gain of 5.0 in 1 evaluations"
    assert float(state.progress_bleu.numpy()) == 6.0


@pytest.mark.parametrize("steps_per_epoch", [1, STEPS_PER_EPOCH])
def test_a_diverged_loss_stops_the_run_before_anything_saves_it(tmp_path, steps_per_epoch):
    model, state = tiny_model(), TrainingState()
    manager = manager_for(model, state, tmp_path)
    poisoned = tf.data.Dataset.from_tensor_slices((np.full((6, 2), np.nan, "float32"), np.ones((6, 1), "float32")))
    callbacks = [TrainingLimits(), PeriodicCheckpoint(manager, every_steps=1)]
    with pytest.raises(ValueError, match=r"training diverged: the loss is nan at (step 1|the end of epoch 1)"):
        model.fit(poisoned.batch(1).repeat(), epochs=2, steps_per_epoch=steps_per_epoch, callbacks=callbacks,
                  verbose=0)
    assert manager.checkpoints == []  # nothing of the diverged run was saved


def test_tensorboard_batch_scalars_of_a_resumed_run_continue_at_the_optimizer_step(tmp_path):
    from zoo.plot import read_scalars
    from zoo.training.callbacks import StepTensorBoard

    model, logs = tiny_model(), str(tmp_path / "logs")
    model.fit(data(), epochs=1, steps_per_epoch=7, callbacks=[StepTensorBoard(logs, update_freq=5, write_graph=False)], verbose=0)
    time.sleep(1.1)  # one event file per run, named by the second it starts
    model.fit(data(), epochs=1, steps_per_epoch=7, callbacks=[StepTensorBoard(logs, update_freq=5, write_graph=False)], verbose=0)
    steps, _ = read_scalars(os.path.join(logs, "train"))["batch_loss"]
    assert list(steps) == [5, 10]  # the second run's 3rd batch is step 10, not step 5 again


def test_a_checkpoint_from_before_progress_bleu_resumes(tmp_path):
    # The field is newer than some workdirs' checkpoints: restoring them failed the match assertion.
    old = TrainingState()
    del old.progress_bleu
    old.best_bleu.assign(30.0)
    path = tf.train.Checkpoint(state=old).save(str(tmp_path / "old"))
    state = TrainingState()
    state.restore(tf.train.Checkpoint(state=state), path)
    assert float(state.best_bleu.numpy()) == 30.0 and float(state.progress_bleu.numpy()) == -1.0
    saved = tf.train.load_checkpoint(tf.train.Checkpoint(state=state).write(str(tmp_path / "new")))
    assert "state/progress_bleu/.ATTRIBUTES/VARIABLE_VALUE" in saved.get_variable_to_shape_map()
    other = TrainingState()
    other.extra = tf.Variable(1.0, name="extra")  # an object the checkpoint does not hold, not a later field: still refused
    with pytest.raises(AssertionError, match="extra"):
        other.restore(tf.train.Checkpoint(state=other), path)
