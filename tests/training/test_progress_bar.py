"""StepsProgbar: the Keras bar's total is what the epoch really runs."""

import re

import keras
import numpy as np
import tensorflow as tf

from zoo.training.progress_bar import StepsProgbar


class StopAt(keras.callbacks.Callback):
    def __init__(self, step):
        super().__init__()
        self.step = step

    def on_train_batch_end(self, batch, logs=None):
        if int(self.model.optimizer.iterations.numpy()) >= self.step:
            self.model.stop_training = True


def fit(capsys, epochs, stop_at, train_steps):
    """Fits 19 steps an epoch, stopped at optimizer step `stop_at`; the bars' "done/total" pairs."""
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    data = tf.data.Dataset.from_tensor_slices((np.zeros((19, 2)), np.zeros((19, 1)))).batch(1).repeat()
    capsys.readouterr()
    model.fit(data, epochs=epochs, steps_per_epoch=19, verbose=1,
              callbacks=[StepsProgbar(19, train_steps), StopAt(stop_at)])
    out = re.sub(r"\x1b\[[0-9;]*m", "", capsys.readouterr().out)  # Keras' colours
    # The last drawing of each epoch's bar (Keras redraws it after "\r").
    finals = [re.findall(r"(\d+)/(\d+) ", epoch)[-1] for epoch in out.split("Epoch ")[1:]]
    return [(int(done), int(total)) for done, total in finals]


def test_a_step_limit_inside_the_first_epoch_is_the_bar_total(capsys):
    assert fit(capsys, epochs=3, stop_at=7, train_steps=7) == [(7, 7)]


def test_only_the_epoch_the_limit_cuts_is_shorter(capsys):
    assert fit(capsys, epochs=3, stop_at=25, train_steps=25) == [(19, 19), (6, 6)]


def test_an_unforeseen_stop_ends_at_the_step_it_reached(capsys):
    assert fit(capsys, epochs=3, stop_at=4, train_steps=0) == [(4, 19)]
