"""WarmupSchedule: the learning rate at given steps, worked out by hand from its formula."""

import keras
import pytest

from recipes import load_config
from zoo.training import WarmupSchedule, build_model, compile_model


def rates(schedule, steps):
    return [float(keras.ops.convert_to_numpy(schedule(step))) for step in steps]


# lr(step) = peak * min(1, s / warmup) * decay(s), s = step + 1 (the first update is step 0).
@pytest.mark.parametrize(
    "kind, expected",
    [
        # steps:           0       49      99      399     699     9999
        ("constant",     [1e-5,   5e-4,   1e-3,   1e-3,   1e-3,   1e-3]),
        # sqrt(100 / s) after warmup: s=400 -> 1/2, s=700 -> 0.378, s=10000 -> 1/10
        ("inverse_sqrt", [1e-5,   5e-4,   1e-3,   5e-4,   1e-3 * (100 / 700) ** 0.5, 1e-4]),
        # 0.5 ** ((s - 100) / 300): s=400 -> 1/2, s=700 -> 1/4, s=10000 -> 0.5**33 (below the floor)
        ("exponential",  [1e-5,   5e-4,   1e-3,   5e-4,   2.5e-4, 1e-6]),
    ],
)  # fmt: skip
def test_warmup_then_decay_to_the_floor(kind, expected):
    schedule = WarmupSchedule(1e-3, kind, warmup_steps=100, decay_steps=300, decay_rate=0.5, minimum=1e-6)
    assert rates(schedule, [0, 49, 99, 399, 699, 9999]) == pytest.approx(expected, rel=1e-5)


def test_serialization_round_trip_and_unknown_kind():
    schedule = WarmupSchedule(2e-3, "exponential", warmup_steps=10, decay_steps=50, decay_rate=0.7, minimum=1e-5)
    again = WarmupSchedule.from_config(schedule.get_config())
    assert rates(again, [0, 9, 59, 500]) == rates(schedule, [0, 9, 59, 500])
    kinds = r"\['constant', 'inverse_sqrt', 'exponential', 'plateau'\]"
    with pytest.raises(ValueError, match=rf"unknown lr_schedule 'cosine'; expected one of {kinds}"):
        WarmupSchedule(1e-3, "cosine")


def test_compile_model_uses_the_recipe_schedule():
    config = load_config("dates_bahdanau")  # exponential, peak 5e-3, warmup 100, halving every 300 steps
    config.update(embedding_dim=8, encoder_units=8, decoder_units=8, attention_units=8, output_units=8)
    model = compile_model(build_model(config, 12, 12), config)
    model.optimizer.iterations.assign(399)
    assert float(keras.ops.convert_to_numpy(model.optimizer.learning_rate)) == pytest.approx(2.5e-3, rel=1e-5)
    assert model.optimizer.clipnorm == 1.0
