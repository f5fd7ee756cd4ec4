"""What zoo-train shows while it works (bar totals, vocabulary progress) and what its budget bounds."""

import re

import pytest

from recipes import load_config
from zoo import progress
from zoo.training import build_tokenizers, train_and_evaluate

TINY = dict(
    dates_train_size=600, dates_dev_size=8, embedding_dim=8, encoder_units=8, decoder_units=8, attention_units=8,
    output_units=8, batch_size=32, final_beam_width=1, num_samples=0, early_stopping_patience=0, export=False,
)  # fmt: skip


def test_a_step_limit_is_the_bar_total_and_the_vocabulary_shows_progress(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(progress, "is_terminal", lambda stream: True)  # as on a terminal
    config = load_config("dates_bahdanau")
    config.update(dict(TINY, train_steps=7, verbose=1))  # 600 pairs / 32: 19 steps an epoch
    results = train_and_evaluate(config, str(tmp_path / "run"))
    out, err = capsys.readouterr()
    out = re.sub(r"\x1b\[[0-9;]*m", "", out)
    assert results["train_steps"] == 7
    bars = re.findall(r"(\d+)/(\d+) ", out)
    assert bars and bars[-1] == ("7", "7") and ("19", "19") not in bars, out[-3000:]
    # The bar's line ends before the dev evaluation reports, which starts a line of its own.
    assert re.search(r"\n\r?7/7 [^\n]*\nepoch 1 step 7: dev BLEU", out.replace("\r7/7", "\n7/7")), out[-2000:]
    assert re.search(r"\rsource vocabulary: \d+/600 sentences", err) and "\rtarget vocabulary:" in err, err[-2000:]


def test_verbose_zero_silences_the_vocabulary_progress(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(progress, "is_terminal", lambda stream: True)
    config = load_config("dates_bahdanau")
    pairs = [("3 mars 2021", "2021-03-03"), ("7 mai 1999", "1999-05-07")]
    build_tokenizers(config, pairs, str(tmp_path / "a"), show_progress=False)
    assert capsys.readouterr().err == ""
    build_tokenizers(config, pairs, str(tmp_path / "b"))
    assert "\rsource vocabulary: 1/2 sentences" in capsys.readouterr().err


def test_max_train_minutes_bounds_the_run_up_to_the_end_of_training(tmp_path):
    config = load_config("dates_bahdanau")
    # 1000 epochs of 5 steps would take many minutes: the 0.1-minute budget has to stop it.
    config.update(dict(TINY, num_epochs=1000, steps_per_epoch=5, max_train_minutes=0.1, verbose=0))
    lines = []
    results = train_and_evaluate(config, str(tmp_path / "run"), print_fn=lines.append)
    assert "stopped: wall-clock budget (max_train_minutes) spent" in lines
    assert 1 <= results["epochs"] < 1000 and 1 <= results["train_steps"] <= 5 * results["epochs"]
    # Checked after every batch (the first one, traced, takes what it takes on a loaded machine):
    # training ended after the budget, and the stages after it are timed apart.
    assert results["until_training_end_seconds"] >= 6.0 and results["final_evaluation_seconds"] > 0
    assert results["wall_time_seconds"] == pytest.approx(
        results["until_training_end_seconds"] + results["final_evaluation_seconds"], abs=1.0)
    assert results["export_seconds"] is None  # no export asked for
