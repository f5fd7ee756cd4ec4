"""The whole zoo-train loop on a tiny `dates` config: results, files, resume, CLI errors."""

import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest
import tensorflow as tf

from recipes import load_config, train_and_export
from zoo.data import dates_splits, write_tsv
from zoo.inference import evaluate_model
from zoo.plot import read_scalars
from zoo.training import train_and_evaluate

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# A model and data small enough that two epochs take seconds on one CPU core.
TINY = dict(
    dates_train_size=600, dates_dev_size=24, embedding_dim=16, encoder_units=16, decoder_units=32,
    attention_units=16, output_units=16, batch_size=32, learning_rate=1e-2, warmup_steps=5,
    final_beam_width=2, num_samples=1, verbose=0, early_stopping_patience=0,
)  # fmt: skip


def tiny_config(**overrides):
    config = load_config("dates_bahdanau")
    config.update(dict(TINY, **overrides))
    return config


def tiny_flags(**overrides):
    return [f"--config.{key}={value}" for key, value in dict(TINY, **overrides).items()]


def zoo_train(*args, **kwargs):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    return subprocess.Popen(
        [sys.executable, "-m", "recipes.train", *args], cwd=ROOT, env=env, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kwargs,
    )


def test_train_and_evaluate_learns_and_writes_the_workdir(tmp_path):
    workdir = str(tmp_path / "run")
    lines = []
    results = train_and_export(tiny_config(num_epochs=3), workdir, print_fn=lines.append)

    history = results["evaluations"]
    assert [h["epoch"] for h in history] == [1, 2, 3]
    assert history[-1]["loss"] < 0.8 * history[0]["loss"]
    # 15 target tokens: chance is ~7%; the digits' structure is learnt in seconds.
    assert history[-1]["accuracy"] > 0.3
    for field in ("bleu", "chrf", "bleu_signature", "chrf_signature", "exact_match", "beam_width", "params",
                  "train_tokens_per_second", "wall_time_seconds", "train_steps", "epochs", "preset", "recipe",
                  "export_path"):
        assert field in results, field
    assert results["preset"] == "bahdanau" and results["recipe"] == "dates_bahdanau"
    assert results["epochs"] == 3 and results["train_steps"] == history[-1]["step"] > 0
    assert results["beam_width"] == 2 and "tok:char" in results["bleu_signature"]
    assert results["train_tokens_per_second"] > 0 and results["params"] > 0
    assert results["machine"]["cpu_count"] == os.cpu_count() and results["machine"]["cpu_model"]
    assert 0 <= results["bleu"] <= 100 and 0 <= results["exact_match"] <= 1
    with open(os.path.join(workdir, "results.json")) as f:
        assert json.load(f)["bleu"] == pytest.approx(results["bleu"])
    for name in ("config.json", "best.keras", "attention.png", "curves.png", "vocab/source/vocab.txt",
                 "vocab/target/vocab.txt", "checkpoints/checkpoint"):
        assert os.path.isfile(os.path.join(workdir, name)), name
    # Every dev evaluation is in TensorBoard at its step, whatever Keras's own logging frequency.
    dev_steps, dev_bleu = read_scalars(os.path.join(workdir, "logs", "dev"))["bleu"]
    assert list(dev_steps) == [h["step"] for h in history]
    assert list(dev_bleu) == pytest.approx([h["bleu"] for h in history], abs=1e-4)
    assert results["curves_plot"] == os.path.join(workdir, "curves.png")
    assert not [name for name in os.listdir(workdir) if "tmp" in name]
    # The recipe's export at the end: a TF Serving version directory, named in the last line.
    assert os.path.isfile(os.path.join(results["export_path"], "saved_model.pb"))
    assert os.path.dirname(results["export_path"]) == os.path.join(workdir, "export")
    assert re.fullmatch(rf"wrote \S+results\.json, \S+attention\.png, \S+curves\.png, "
                        rf"export {re.escape(results['export_path'])} \(\d+s wall time\)", lines[-1]), lines[-1]

    # zoo-eval's library function scores the export (or the workdir) on a TSV file.
    dev_tsv = write_tsv(str(tmp_path / "dev.tsv"), dates_splits(seed=0, train=1, dev=24, test=1)["dev"])
    evaluated = evaluate_model(workdir, dev_tsv, beam_width=1)
    assert evaluated["sentences"] == 24 and evaluated["sentences_per_second"] > 0
    assert "tok:char" in evaluated["bleu_signature"]  # the recipe's BLEU tokenizer, from config.json
    assert 0 <= evaluated["bleu"] <= 100 and 0 <= evaluated["exact_match"] <= 1

    # Running the finished recipe again trains nothing and reports the same model.
    again = train_and_evaluate(tiny_config(num_epochs=3, export=False), workdir, print_fn=lambda line: None)
    assert again["train_steps"] == results["train_steps"] and again["evaluations"] == results["evaluations"]  # none new
    assert again["bleu"] == pytest.approx(results["bleu"])


def test_train_steps_and_a_changed_model_are_handled(tmp_path):
    workdir = str(tmp_path / "run")
    results = train_and_evaluate(tiny_config(train_steps=7, export=False), workdir, print_fn=lambda line: None)
    assert results["train_steps"] == 7 and results["epochs"] == 1
    again = train_and_evaluate(tiny_config(train_steps=7, export=False), workdir, print_fn=lambda line: None)
    assert again["train_steps"] == 7  # the same limit: nothing to train
    # A larger limit trains on to it (the run that stopped at 7 had marked the workdir finished: nothing ran).
    more = train_and_evaluate(tiny_config(train_steps=12, export=False), workdir, print_fn=lambda line: None)
    assert more["train_steps"] == 12 and more["resumed_from_step"] == 7
    # Every run's evaluations, not only the last run's (a resumed run's dev curve lost the earlier ones).
    assert again["evaluations"] == results["evaluations"] and [e["step"] for e in results["evaluations"]] == [7]
    assert [e["step"] for e in more["evaluations"]] == [7, 12] and more["evaluations"][0] == results["evaluations"][0]
    with open(os.path.join(workdir, "evaluations.json")) as f:
        assert json.load(f) == {"evaluations": more["evaluations"]}
    # The first version's file, a bare list, is read as well.
    with open(os.path.join(workdir, "evaluations.json"), "w") as f:
        json.dump(more["evaluations"], f)
    older = train_and_evaluate(tiny_config(train_steps=14, export=False), workdir, print_fn=lambda line: None)
    assert [e["step"] for e in older["evaluations"]] == [7, 12, 14]
    # A damaged record is named in the log and starts again; the training's state is not touched.
    with open(os.path.join(workdir, "evaluations.json"), "w") as f:
        f.write('{"evaluations": [{"ste')
    lines = []
    damaged = train_and_evaluate(tiny_config(train_steps=16, export=False), workdir, print_fn=lines.append)
    assert damaged["resumed_from_step"] == 14 and [e["step"] for e in damaged["evaluations"]] == [16]
    assert any("evaluations.json: " in line and "starts again" in line for line in lines), lines
    with pytest.raises(ValueError, match=r"decoder_units: 32 -> 48"):
        train_and_evaluate(tiny_config(decoder_units=48), workdir, print_fn=lambda line: None)


def test_max_train_minutes_is_a_budget_of_the_workdir_that_a_rerun_does_not_renew(tmp_path):
    # Each run had a budget of its own: the same command again trained and replaced the results every time.
    workdir, lines = str(tmp_path / "run"), []
    config = tiny_config(max_train_minutes=0.002, num_epochs=1000, export=False)
    first = train_and_evaluate(config, workdir, print_fn=lambda line: None)
    assert first["train_steps"] >= 1
    spent = tf.train.load_checkpoint(os.path.join(workdir, "checkpoints"))
    assert spent.get_tensor("state/budget_seconds/.ATTRIBUTES/VARIABLE_VALUE") >= 0.12  # the run, its dev evaluation
    again = train_and_evaluate(config, workdir, print_fn=lines.append)
    assert again["train_steps"] == first["train_steps"] and again["evaluations"] == first["evaluations"]  # none new
    assert any("training already finished" in line and "a larger budget trains on" in line for line in lines)
    more = train_and_evaluate(tiny_config(max_train_minutes=60, train_steps=first["train_steps"] + 3,
                                          num_epochs=1000, export=False), workdir, print_fn=lambda line: None)
    assert more["train_steps"] == first["train_steps"] + 3


def test_a_dev_file_with_several_references_trains_and_scores_with_them_all(tmp_path):
    splits = dates_splits(seed=0, train=100, dev=6, test=1)
    train = write_tsv(str(tmp_path / "train.tsv"), splits["train"])
    dev = tmp_path / "dev.tsv"  # a second reference column: the target written backwards
    dev.write_text("".join(f"{s}\t{t}\t{t[::-1]}\n" for s, t in splits["dev"]), encoding="utf-8")
    config = tiny_config(train_tsv=train, dev_tsv=str(dev), train_steps=2, final_beam_width=1, export=False)
    results = train_and_evaluate(config, str(tmp_path / "run"), print_fn=lambda line: None)
    assert results["dev_sentences"] == 6 and results["train_steps"] == 2
    assert "nrefs:2" in results["bleu_signature"] and "nrefs:2" in results["chrf_signature"]


@pytest.mark.slow
def test_killed_run_resumes_where_its_checkpoint_left_off(tmp_path):
    workdir = str(tmp_path / "run")
    flags = ["--workdir", workdir, *tiny_flags(export=False, final_beam_width=1)]
    first = zoo_train(*flags, "--config.num_epochs=1000")
    index = os.path.join(workdir, "checkpoints", "checkpoint")
    deadline = time.monotonic() + 120
    try:
        while not os.path.exists(index):
            assert first.poll() is None, first.communicate()[1][-2000:]
            assert time.monotonic() < deadline, "no checkpoint after 120 s"
            time.sleep(0.2)
        time.sleep(0.5)  # let it get into the next epoch: the kill must not cost the saved one
    finally:
        first.send_signal(signal.SIGKILL)
        first.communicate()
    assert first.returncode == -signal.SIGKILL
    assert not os.path.exists(os.path.join(workdir, "results.json"))

    # The state the killed run left: the rerun must start from exactly this step.
    reader = tf.train.load_checkpoint(os.path.dirname(index))
    saved_step = int(reader.get_tensor("optimizer/_iterations/.ATTRIBUTES/VARIABLE_VALUE"))
    saved_epoch = int(reader.get_tensor("state/epoch/.ATTRIBUTES/VARIABLE_VALUE"))
    second = zoo_train(*flags, "--config.num_epochs=1000", f"--train_steps={saved_step + 5}")
    out, err = second.communicate(timeout=300)
    assert second.returncode == 0, err[-2000:]
    resumed = re.search(r"resuming from \S+: epoch (\d+), step (\d+)", out)
    assert resumed, out
    epoch, step = int(resumed.group(1)), int(resumed.group(2))
    assert (epoch, step) == (saved_epoch, saved_step)
    assert epoch >= 1 and step >= 19  # 600 pairs / 32 per batch: >= 19 steps an epoch
    with open(os.path.join(workdir, "results.json")) as f:
        results = json.load(f)
    assert results["resumed_from_step"] == step
    assert results["train_steps"] == step + 5  # continued, not restarted from 0
    assert results["epochs"] == epoch + 1
    assert results["evaluations"][-1]["step"] == step + 5


BAD_INPUTS = {
    "unknown-recipe": (["--recipe", "nope"], r"unknown recipe 'nope'; expected one of \[.*'dates_bahdanau'.*'text'"),
    "unknown-preset": (["--model", "transformer"], r"model='transformer' \(expected one of \[.*'rnnenc'"),
    "missing-tsv": (["--recipe", "text", "--train_tsv", "/no/such.tsv"], r"/no/such\.tsv"),
    "malformed-tsv": (["--recipe", "text", "--train_tsv", "{malformed}"], r"malformed\.tsv:2"),
    "empty-tsv": (["--recipe", "text", "--train_tsv", "{empty}"], r"empty\.tsv"),
    "dates-with-dev-only": (["--dev_tsv", "{malformed}"], r"--dev_tsv needs --train_tsv"),
    "unknown-attention": (["--model", "luong_general", "--config.attention=luong"],
                          r"invalid config: attention='luong' \(expected None \(the preset's\) or one of \[.*'reduced_rank'\]\)$"),
    "unknown-dataset": (["--config.dataset=wmt"], r"unknown dataset 'wmt'; expected one of \['dates', 'tfds', 'tsv'\]"),
    "unknown-tfds-name": (["--config.dataset=tfds", "--config.tfds_name=no_such_dataset"],
                          r"TFDS dataset 'no_such_dataset' split 'train': Dataset no_such_dataset not found\.$"),
}


def test_bad_input_exits_with_one_clear_line(tmp_path):
    malformed = tmp_path / "malformed.tsv"
    malformed.write_text("one\tun\nno tab here\nalso no tab\nthree\ttrois\n", encoding="utf-8")
    empty = tmp_path / "empty.tsv"
    empty.write_text("", encoding="utf-8")
    # All at once: each process spends its time importing TensorFlow.
    processes = {
        name: zoo_train("--workdir", str(tmp_path / name), *[a.format(malformed=malformed, empty=empty) for a in args])
        for name, (args, _) in BAD_INPUTS.items()
    }
    for name, process in processes.items():
        out, err = process.communicate(timeout=300)
        assert process.returncode == 2, (name, out, err)
        lines = [line for line in err.splitlines() if line.startswith("zoo-train: error:")]
        assert len(lines) == 1 and re.search(BAD_INPUTS[name][1], lines[0]), (name, err)
        assert "Traceback" not in err, (name, err)


def test_an_epoch_is_a_whole_number_of_host_calls_and_the_log_says_so(tmp_path):
    # Keras ran epochs of 8 steps for steps_per_epoch=5 at 4 steps a call, with no word: the evaluations fell
    # at steps 8 and 16 and the progress bar read "8/5".
    lines = []
    results = train_and_evaluate(tiny_config(steps_per_epoch=5, steps_per_execution=4, num_epochs=2),
                                 str(tmp_path / "run"), print_fn=lines.append)
    assert [h["step"] for h in results["evaluations"]] == [8, 16]
    assert any("an epoch is 8 steps, not 5: a whole number of host calls of steps_per_execution=4" in line
               for line in lines), lines
