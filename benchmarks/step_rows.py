"""How a decoding step's cost grows with its rows: the model's step alone, at several widths, as JSON.

    python benchmarks/step_rows.py                                     # random reference-size model
    python benchmarks/step_rows.py --workdir runs/fr_en --tsv test.tsv

Beam search with K hypotheses runs the model's step on K rows a sentence, greedy search on
one, so beam 5 computes about five times greedy's rows. What it pays for them depends on
how a step's cost grows with its rows: where a step of 40 rows costs mostly a fixed
amount (per-op overhead, products too narrow to run at the machine's rate), five times
the rows cost far less than five times the time; where the cost is already proportional
to the rows, they cost nearly five times as much, whatever the search does around them.

For each count of sentences B of `--sentences` and each K of `--hypotheses`, this times
`--steps` decoding steps of the model on B * K rows, in one `tf.function` loop: the step
`zoo.decoding.decode` runs (`model.step` with the output layer and kernels prepared once,
the logits left unnormalized), its state fed back, the same tokens each step, no search.
The B sentences are the first of `--tsv`, each cut or padded to `--source_length` tokens
(so that every point attends over the same source length; 32 is about the mean of the Debian
test set, 31.3 subwords), or random ids of that length. The repeats of every point are
interleaved and the fastest counts. Per K, a least-squares line over its points, `ms_per_step = fixed_ms + per_row_ms *
rows` (`fit`), splits the cost into a part per step and a part per row; `per_row_vs_k1`
is each K's cost per row over K = 1's, the saving per row that a wider step brings.
"""

import json
import os
import sys
import time

from absl import app, flags
from flag_checks import model_files, positive_integers

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from zoo import machine  # noqa: E402  (standard library only: cheap)

FLAGS = flags.FLAGS
flags.DEFINE_string("workdir", None, "a zoo-train workdir (default: a random reference-size model)")
flags.DEFINE_string("tsv", None, "sentences to encode (first column), needed with --workdir")
flags.DEFINE_string("preset", "luong_general", "preset of the random model")
flags.DEFINE_integer("vocab_size", 8000, "vocabulary size per side of the random model", lower_bound=1)
flags.DEFINE_integer("source_length", 32, "source tokens per sentence (cut or padded)", lower_bound=1)
flags.DEFINE_list("sentences", ["4", "16", "43", "64"], "sentence counts B (rows: B times each K)")
flags.DEFINE_list("hypotheses", ["1", "5"], "hypotheses per sentence K (1: greedy's rows, 5: beam 5's)")
flags.DEFINE_integer("steps", 50, "decoding steps per timed loop", lower_bound=1)
flags.DEFINE_integer("repeats", 3, "timed repetitions of every point, interleaved; the fastest counts", lower_bound=1)


def fit(rows, ms):
    """`(fixed_ms, per_row_ms)`: the least-squares line `ms = fixed_ms + per_row_ms * rows`.

    With a single distinct row count the line is through the origin (`fixed_ms` 0).
    """
    n = len(rows)
    mean_rows, mean_ms = sum(rows) / n, sum(ms) / n
    spread = sum((r - mean_rows) ** 2 for r in rows)
    if spread == 0:
        return 0.0, mean_ms / mean_rows
    slope = sum((r - mean_rows) * (m - mean_ms) for r, m in zip(rows, ms)) / spread
    return mean_ms - slope * mean_rows, slope


def load_sources(largest):
    """`(model, source_ids (largest, S) int32, setting)`."""
    import numpy as np
    import tensorflow as tf

    import zoo.models

    if FLAGS.workdir:
        from zoo.models.workdir import load_workdir

        if not FLAGS.tsv:
            raise app.UsageError("--workdir needs --tsv: the sentences to encode (first column).")
        model, source_tokenizer, _, _ = load_workdir(FLAGS.workdir)
        with open(FLAGS.tsv, encoding="utf-8") as f:
            texts = [line.split("\t")[0] for line in f if line.strip()][:largest]
        if len(texts) < largest:
            raise app.UsageError(f"--tsv={FLAGS.tsv}: {len(texts)} sentences, fewer than --sentences' {largest}")
        sources = source_tokenizer.encode(tf.constant(texts)).to_tensor(shape=[largest, FLAGS.source_length])
        setting = {"model": FLAGS.workdir, "weights": "trained", "sentences_from": FLAGS.tsv}
        return model, sources.numpy().astype(np.int32), setting
    model = zoo.models.build(FLAGS.preset, FLAGS.vocab_size, FLAGS.vocab_size, dropout=0.0)
    sources = np.random.default_rng(0).integers(4, FLAGS.vocab_size, size=(largest, FLAGS.source_length))
    setting = {"model": f"{FLAGS.preset} (random weights, reference size)", "weights": "random",
               "vocab_size": FLAGS.vocab_size}
    return model, sources.astype(np.int32), setting


def step_loop(model, source_ids, hypotheses, steps):
    """A function that runs `steps` decoding steps on `len(source_ids) * hypotheses` rows."""
    import tensorflow as tf

    from zoo.data.vocabulary import BOS_ID
    from zoo.decoding.beams import expand_beams
    from zoo.decoding.loop import prepare

    inputs = prepare(model, source_ids)
    state = expand_beams(inputs.initial_state, hypotheses)
    tokens = tf.fill([len(source_ids), hypotheses], BOS_ID)
    prepared = {"output": inputs.output, "kernels": inputs.kernels, "normalized": False}

    @tf.function
    def run():
        def body(step, state, total):
            logits, state, _ = model.step(tokens, state, inputs.memory, **prepared)
            return step + 1, state, total + logits[0, 0, 0]  # read: the output projection is not pruned

        return tf.while_loop(lambda step, *_: step < steps, body, (0, state, 0.0))[2]

    return run


def main(argv):
    del argv
    counts = positive_integers("sentences", FLAGS.sentences, example="4,16,43,64")
    widths = positive_integers("hypotheses", FLAGS.hypotheses, example="1,5")
    model_files(FLAGS.workdir, FLAGS.tsv)
    model, sources, setting = load_sources(max(counts))
    points = [(count, width) for width in widths for count in counts]
    loops = {point: step_loop(model, sources[:point[0]], point[1], FLAGS.steps) for point in points}
    for run in loops.values():
        run().numpy()  # trace and warm up
    seconds = {point: [] for point in points}
    for _ in range(FLAGS.repeats):
        for point, run in loops.items():
            started = time.perf_counter()
            run().numpy()
            seconds[point].append(time.perf_counter() - started)
    per_step = {point: 1000 * min(times) / FLAGS.steps for point, times in seconds.items()}
    rows = [{"sentences": count, "hypotheses": width, "rows": count * width,
             "ms_per_step": round(per_step[(count, width)], 4),
             "ms_per_row": round(per_step[(count, width)] / (count * width), 5)}
            for count, width in points]
    lines = {}
    for width in widths:
        mine = [row for row in rows if row["hypotheses"] == width]
        fixed, per_row = fit([row["rows"] for row in mine], [row["ms_per_step"] for row in mine])
        lines[str(width)] = {"fixed_ms": round(fixed, 4), "per_row_ms": round(per_row, 5)}
    report = {
        **setting, "source_length": int(sources.shape[1]), "steps": FLAGS.steps, "repeats": FLAGS.repeats,
        "threads": os.cpu_count(), "load_average_1min": os.getloadavg()[0], "machine": machine.describe(),
        "points": rows, "fit": lines,
    }
    if 1 in widths and lines["1"]["per_row_ms"] > 0:  # a noisy run can give K = 1 no positive slope
        report["per_row_vs_k1"] = {key: round(line["per_row_ms"] / lines["1"]["per_row_ms"], 3)
                                   for key, line in lines.items() if key != "1"}
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    app.run(main)
