"""Keras' progress bar with totals that match what will run."""

import keras


class StepsProgbar(keras.callbacks.ProgbarLogger):
    """Keras' `ProgbarLogger` whose epoch total is the steps that epoch will really run.

    `fit(steps_per_epoch=200)` stopped by a step limit at step 60 would otherwise draw
    "200/200": here the epoch that the limit cuts short is announced as "60/60", and an
    epoch stopped early for a reason nobody knew in advance (the wall-clock budget) ends
    at the step it reached ("37/200"), never at a total it did not run.

    Put it before the callbacks that print after an epoch (the dev evaluation): Keras keeps
    a `ProgbarLogger` given in `callbacks` where it is, so the bar's line is finished first.

    Args:
      steps_per_epoch: the `steps_per_epoch` given to `fit`.
      train_steps: the optimizer step at which training stops; 0 = no such limit.
    """

    def __init__(self, steps_per_epoch, train_steps=0):
        super().__init__()
        self.steps_per_epoch = int(steps_per_epoch)
        self.train_steps = int(train_steps or 0)

    def epoch_total(self):
        """The steps the coming epoch will run: all of them, or those left before `train_steps`."""
        if not self.train_steps:
            return self.steps_per_epoch
        done = int(self.model.optimizer.iterations.numpy())
        return max(1, min(self.steps_per_epoch, self.train_steps - done))

    def on_epoch_begin(self, epoch, logs=None):
        self.target = self.epoch_total()
        super().on_epoch_begin(epoch, logs)

    def on_epoch_end(self, epoch, logs=None):
        if self.progbar is None:  # an epoch that ran no step
            return
        self.progbar.update(self.seen, list((logs or {}).items()), finalize=True)
