"""What a resumed run needs besides the weights and the optimizer, saved in the same checkpoint."""

import tensorflow as tf


class TrainingState(tf.Module):
    """The counters a resumed run needs besides the weights and the optimizer.

    Every field is a `tf.Variable`, so it is saved in the same checkpoint as the model.

    Fields:
      epoch: completed epochs (the next `fit` starts at `initial_epoch=epoch`).
      best_bleu: best dev BLEU so far (-1 before the first evaluation).
      bad_evaluations: evaluations since the last BLEU progress (early stopping).
      progress_bleu: the dev BLEU of the last evaluation that counted as progress (a gain of
        `min_delta` over the one before it; -1 before the first, or in a checkpoint that predates it).
      finished: 1 once training stopped for good (early stopping, target BLEU); the step and time limits
        are compared with the rerun's own, so that raising them trains on.
      evaluated: 0 while the last completed epoch still awaits its dev evaluation.
      train_seconds: training time over all runs, dev evaluations excluded.
      budget_seconds: the wall-clock time of `max_train_minutes` the runs spent, each from its start to its
        last checkpoint (dev evaluations included): the budget a resumed run has left.
      lr_scale: the factor of the "plateau" learning-rate schedule, float32 (created by
        `add_lr_scale` under the strategy's scope, since the training step reads it).
    """

    def __init__(self):
        super().__init__(name="training_state")
        self.epoch = tf.Variable(0, dtype=tf.int64, trainable=False, name="epoch")
        self.best_bleu = tf.Variable(-1.0, dtype=tf.float64, trainable=False, name="best_bleu")
        self.bad_evaluations = tf.Variable(0, dtype=tf.int64, trainable=False, name="bad_evaluations")
        self.progress_bleu = tf.Variable(-1.0, dtype=tf.float64, trainable=False, name="progress_bleu")
        self.finished = tf.Variable(0, dtype=tf.int64, trainable=False, name="finished")
        self.train_seconds = tf.Variable(0.0, dtype=tf.float64, trainable=False, name="train_seconds")
        self.evaluated = tf.Variable(1, dtype=tf.int64, trainable=False, name="evaluated")
        self.budget_seconds = tf.Variable(0.0, dtype=tf.float64, trainable=False, name="budget_seconds")
        self.lr_scale = None

    def add_lr_scale(self):
        self.lr_scale = tf.Variable(1.0, dtype=tf.float32, trainable=False, name="lr_scale")
        return self.lr_scale

    LATER_FIELDS = ("progress_bleu", "budget_seconds")  # fields a checkpoint written before they existed lacks

    def restore(self, checkpoint, path):
        """`checkpoint.restore(path)`, asserting that every object it holds matched, where `checkpoint`
        tracks this state as `state`. A `LATER_FIELDS` field the checkpoint lacks keeps its initial value
        (and is saved from then on) instead of failing the assertion."""
        saved = tf.train.load_checkpoint(path).get_variable_to_shape_map()
        held = {name: getattr(self, name) for name in self.LATER_FIELDS
                if not any(key.startswith(f"state/{name}/") for key in saved)}
        for name in held:
            delattr(self, name)
        try:
            checkpoint.restore(path).assert_existing_objects_matched()
        finally:
            for name, variable in held.items():
                setattr(self, name, variable)
