"""Quality per step: the `text` recipe's reference model with one change at a time, as JSON rows.

    # DATA: train.tsv, dev.tsv and test.tsv (make_debian_corpus.py --lang fr --out DATA)
    python benchmarks/quality.py --data_dir DATA --max_train_minutes 20 \
        --out benchmarks/results/quality_debian_fr_en.json
    python benchmarks/quality.py --data_dir DATA --train_steps 300 --rows baseline,float32 --notest
    python benchmarks/quality.py --data_dir DATA --out quality.json --markdown  # the table of docs/performance.md

Each row is a `zoo-train --recipe text` run in its own process, from the same seed, with the
row's recipe fields on top of the recipe's (and of any `--set`): the dev BLEU (greedy, the
first `--dev_sentences` pairs) every `--eval_every` steps, then, unless `--notest`,
`zoo-eval` of the best checkpoint on the whole dev and test sets with beam 5 and beam 1. The JSON
(rewritten after every row) holds per row its fields, steps, tokens/s, learning curve and
scores; `--rows` picks rows by name (default: all of `ROWS`). Rows already in `--out` (from an
interrupted sweep) are kept and not run again.
"""

import json
import os
import subprocess
import sys
import time

from absl import app, flags
from flag_checks import corpus_files

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from zoo import machine  # noqa: E402  (standard library only: cheap)

FLAGS = flags.FLAGS
flags.DEFINE_string("data_dir", None, "a folder with train.tsv, dev.tsv and test.tsv (required unless --markdown)")
flags.DEFINE_list("rows", None, "rows to run, by name (default: all)")
flags.DEFINE_integer("train_steps", 0, "optimizer steps of every row; 0 = no step limit")
flags.DEFINE_float("max_train_minutes", 20.0, "wall-clock training budget of every row; 0 = none")
flags.DEFINE_integer("eval_every", 200, "steps between dev evaluations")
flags.DEFINE_integer("dev_sentences", 500, "dev pairs decoded (greedy) at each evaluation")
flags.DEFINE_bool("test", True, "score the best checkpoint on the whole dev and test sets, beam 5 and beam 1")
flags.DEFINE_multi_string("set", [], "a recipe field of every row, field=value (repeatable)")
flags.DEFINE_string("workdir", "runs/quality", "where the rows' workdirs go")
flags.DEFINE_string("out", "quality.json", "the JSON results file")
flags.DEFINE_bool("markdown", False, "only print --out's rows as a Markdown table (nothing is run)")

# One change at a time from the `text` recipe (recipes/configs/text.py), which is row "baseline".
# The rows of benchmarks/results/quality_ablation_300_steps.json were measured before the
# recipe tied its embeddings: their baseline is untied (row "untied_embeddings" today).
PREVIOUS_DEFAULTS = {"lr_schedule": "inverse_sqrt", "warmup_steps": 500, "clipnorm": 1.0, "global_clipnorm": 0.0,
                     "loss_normalization": "tokens", "init_scale": 0.0, "dropout": 0.2}
WORDS = {"source_tokenizer": "word", "target_tokenizer": "word", "max_source_length": 50, "max_target_length": 50}
ROWS = {
    "baseline": {},
    "previous_defaults": PREVIOUS_DEFAULTS,  # the text recipe's optimization before this ablation, all at once
    "words": WORDS,
    "loss_per_token": {"loss_normalization": "tokens"},
    "init_glorot": {"init_scale": 0.0},
    "lr_inverse_sqrt": {"lr_schedule": "inverse_sqrt", "warmup_steps": 500},
    "lr_plateau": {"lr_schedule": "plateau"},
    "label_smoothing_0.1": {"label_smoothing": 0.1},
    "dropout_0.2": {"dropout": 0.2},
    "shared_vocab": {"shared_vocab": True},
    "tied_embeddings": {"tie_embeddings": True},  # the recipe's default since this row: a no-op now
    "untied_embeddings": {"tie_embeddings": False},
    "token_batches": {"batch_tokens": 2000},
    "clip_per_variable_1": {"clipnorm": 1.0, "global_clipnorm": 0.0},
    "float32": {"precision": "float32"},
}


def _command(name):
    """`zoo-train`/`zoo-eval` of this checkout (`python -m recipes.<name>` at its root), not whichever is installed."""
    return [sys.executable, "-m", f"recipes.{name}"]


def _data(split):
    return os.path.abspath(os.path.join(FLAGS.data_dir, f"{split}.tsv"))


def _value(text):
    """A command-line value as the recipe expects it."""
    return text if isinstance(text, str) else json.dumps(text)


def train_row(name, fields):
    """Trains one row; returns its results.json (None if the run failed) and its workdir."""
    workdir = os.path.abspath(os.path.join(FLAGS.workdir, name))  # the commands run at ROOT
    command = [*_command("train"), "--recipe", "text", "--workdir", workdir,
               "--train_tsv", _data("train"), "--dev_tsv", _data("dev"), "--seed", "0",
               f"--config.steps_per_epoch={FLAGS.eval_every}", "--config.num_epochs=100000",
               "--config.early_stopping_patience=0", f"--config.max_eval_sentences={FLAGS.dev_sentences}",
               "--config.final_beam_width=1", "--config.num_samples=0", "--config.verbose=0",
               "--config.export=False"]
    if FLAGS.train_steps:
        command += ["--train_steps", str(FLAGS.train_steps)]
    if FLAGS.max_train_minutes:
        command += ["--max_train_minutes", str(FLAGS.max_train_minutes)]
    command += [f"--config.{assignment}" for assignment in FLAGS.set]
    command += [f"--config.{field}={_value(value)}" for field, value in fields.items()]
    os.makedirs(FLAGS.workdir, exist_ok=True)
    with open(workdir + ".log", "w", encoding="utf-8") as log:
        finished = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT).returncode == 0
    results = os.path.join(workdir, "results.json")
    if not finished or not os.path.exists(results):
        return None, workdir
    with open(results, encoding="utf-8") as f:
        return json.load(f), workdir


def final_scores(workdir, split):
    """zoo-eval of the row's best checkpoint on a whole split: {"beam5"/"beam1": {bleu, chrf, seconds}}."""
    scores = {}
    for beam in (5, 1):
        started = time.perf_counter()
        output = subprocess.run(
            [*_command("evaluate"), "--model", workdir, "--tsv", _data(split),
             "--beam_width", str(beam)], capture_output=True, text=True, check=True, cwd=ROOT).stdout
        report = json.loads(output.strip().splitlines()[-1])
        scores[f"beam{beam}"] = {"bleu": round(report["bleu"], 2), "chrf": round(report["chrf"], 2),
                                 "seconds": round(time.perf_counter() - started, 1)}
    return scores


def summary(name, fields, results, workdir):
    if results is None:
        return {"row": name, "fields": fields, "error": f"zoo-train failed; see {workdir}.log"}
    row = {"row": name, "fields": fields, "steps": results.get("train_steps"),
           "train_minutes": round(results.get("train_seconds", 0) / 60, 2),
           "train_tokens_per_second": round(results.get("train_tokens_per_second", 0)),
           "dev_curve": [(e["step"], round(e["bleu"], 2), round(e["loss"], 3)) for e in results["evaluations"]],
           "best_dev_bleu_greedy": round(max(e["bleu"] for e in results["evaluations"]), 2)}
    if FLAGS.test:
        row["dev"], row["test"] = final_scores(workdir, "dev"), final_scores(workdir, "test")
    return row


def markdown_table(report):
    """The rows of a report as a Markdown table: the change, dev BLEU at each evaluation, test BLEU."""
    steps = sorted({step for row in report["rows"] for step, _, _ in row.get("dev_curve", [])})
    tested = any(row.get("test") for row in report["rows"])  # no test column for a --notest sweep
    head = ["row", "change from `text`"] + [f"dev BLEU @{step}" for step in steps] + ["test BLEU beam 5 / 1"] * tested
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in report["rows"]:
        curve = {step: bleu for step, bleu, _ in row.get("dev_curve", [])}
        change = ", ".join(f"{field}={value}" for field, value in row["fields"].items()) or "(none)"
        test = row.get("test")
        cells = [row["row"], change] + [f"{curve[step]:.2f}" if step in curve else "" for step in steps]
        if tested:
            cells.append(f"{test['beam5']['bleu']:.1f} / {test['beam1']['bleu']:.1f}" if test else "")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv):
    del argv
    if FLAGS.markdown:
        with open(FLAGS.out, encoding="utf-8") as f:
            print(markdown_table(json.load(f)))
        return
    if not FLAGS.data_dir:
        raise app.UsageError("--data_dir is required (a folder with train.tsv, dev.tsv and test.tsv)")
    corpus_files(FLAGS.data_dir, ["train.tsv", "dev.tsv"] + (["test.tsv"] if FLAGS.test else []))
    names = FLAGS.rows or list(ROWS)
    unknown = [name for name in names if name not in ROWS]
    if unknown:
        raise app.UsageError(f"unknown row(s) {unknown}; rows are {list(ROWS)}")
    report = {"what": "benchmarks/quality.py: the text recipe, one change at a time",
              "data_dir": os.path.abspath(FLAGS.data_dir), "train_steps": FLAGS.train_steps,
              "max_train_minutes": FLAGS.max_train_minutes, "eval_every": FLAGS.eval_every,
              "dev_sentences": FLAGS.dev_sentences, "set": FLAGS.set,
              "machine": machine.describe(), "rows": []}
    if os.path.exists(FLAGS.out):  # an interrupted sweep goes on: rows already in the file are kept
        with open(FLAGS.out, encoding="utf-8") as f:
            report["rows"] = [row for row in json.load(f)["rows"] if "error" not in row]
    done = {row["row"] for row in report["rows"]}
    for name in [name for name in names if name not in done]:
        load_before, ticks = os.getloadavg()[0], machine.cpu_ticks()
        results, workdir = train_row(name, ROWS[name])
        row = summary(name, ROWS[name], results, workdir)
        row["load_average_before"] = round(load_before, 2)
        row["cpu_shares"] = machine.cpu_shares(ticks, machine.cpu_ticks())  # training and scoring: the hypervisor's
        report["rows"].append(row)
        print(json.dumps(row), flush=True)
        with open(FLAGS.out, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    app.run(main)
