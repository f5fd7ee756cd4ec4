"""BLEU by source sentence length, with and without attention (Bahdanau et al., 2015, figure 2).

    # data/fr_en: train.tsv, dev.tsv and test.tsv of a parallel corpus (the README's Debian fr->en)
    python benchmarks/long_sentences.py --data_dir data/fr_en --train_steps 400 \
        --out benchmarks/results/long_sentences.json

Trains each of `--presets` (default: `rnnenc`, the fixed-vector encoder-decoder; `bahdanau`,
RNNsearch; `luong_general`) twice with the same budget, on the training pairs of at most 30
and at most 50 source words (the paper's "-30" and "-50"), with the `text` recipe (by default
at the smaller sizes of `CPU_MODEL`). Then translates the whole test set, long sentences
included, with beam search and scores each source-length bucket with sacreBLEU. Writes the
JSON after every run and the figure at the end (`zoo.plot.bleu_by_length_figure`).
"""

import json
import os
import sys
import tempfile
import time

from absl import app, flags
from flag_checks import corpus_files, positive_integers

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from recipes import load_config  # noqa: E402
from zoo import machine  # noqa: E402

FLAGS = flags.FLAGS
flags.DEFINE_string("data_dir", None, "a folder with train.tsv, dev.tsv and test.tsv")
flags.DEFINE_list("presets", ["rnnenc", "bahdanau", "luong_general"], "models compared (zoo.models.presets())")
flags.DEFINE_list("max_words", ["30", "50"], "longest training source, in words, one run per value and preset")
flags.DEFINE_integer("train_steps", 400, "training steps of every run (the same budget for all)", lower_bound=1)
flags.DEFINE_float("max_train_minutes", 0.0, "also stop a run after this many minutes; 0 = steps only")
flags.DEFINE_integer("dev_sentences", 200, "dev pairs scored once, at the end of each run's training")
flags.DEFINE_integer("test_sentences", 0, "test pairs translated; 0 = all")
flags.DEFINE_integer("beam_width", 5, "beam width of the test translations", lower_bound=1)
flags.DEFINE_integer("bucket_width", 10, "words per length bucket", lower_bound=1)
flags.DEFINE_integer("last_bucket", 60, "sources longer than this share the last bucket", lower_bound=1)
flags.DEFINE_bool("cpu_model", True, "the small sizes of CPU_MODEL instead of the text recipe's own")
flags.DEFINE_multi_string("set", [], "a `text` recipe field for every run, field=value (repeatable; wins)")
flags.DEFINE_string("workdir", None, "where data subsets and runs go (default: a temporary folder)")
flags.DEFINE_string("out", "long_sentences.json", "the JSON results file")
flags.DEFINE_string("png", None, "the figure (default: the JSON file's name with .png)")
flags.mark_flag_as_required("data_dir")

NAMES = {"rnnenc": "RNNenc", "bahdanau": "RNNsearch"}  # the paper's names; other presets keep theirs
MAX_TOKENS = 400  # no truncation: the longest test sentence is read and translated whole
# Sizes for a budget of minutes on a CPU (the text recipe's are 256/512 and 8000 pieces a side):
# a quarter of the cost per sentence, and more, smaller steps. Tokenizers (SentencePiece) and
# optimization are the recipe's own (`--set source_tokenizer=word --set target_tokenizer=word`: words).
CPU_MODEL = dict(embedding_dim=128, encoder_units=128, decoder_units=256, attention_units=128, output_units=128,
                 source_vocab_size=4000, target_vocab_size=4000, batch_size=32)  # fmt: skip


def words(text):
    return len(text.split())


def buckets(width, last):
    """`[(first, last_or_None, label)]` source-length buckets in words: 1-10, 11-20, ..., 61+."""
    edges = list(range(0, last, width))
    return [(lo + 1, lo + width, f"{lo + 1}-{lo + width}") for lo in edges] + [(last + 1, None, f"{last + 1}+")]


def bucket_of(length, bounds):
    return next(i for i, (_, hi, _) in enumerate(bounds) if hi is None or length <= hi)


def settings():
    """The `--set` assignments, `{field: value}`, each parsed as its field's type in the `text` recipe (a
    field whose default is None has its type too); UsageError for an unknown field or a bad value."""
    config, parsed = load_config("text"), {}
    for assignment in FLAGS.set:
        field, _, value = assignment.partition("=")
        if field not in config:
            raise app.UsageError(f"--set {assignment}: the text recipe has no field {field!r}")
        kind = config.get_type(field)
        booleans = {"1": True, "true": True, "0": False, "false": False}
        try:
            parsed[field] = booleans[value.lower()] if kind is bool else kind(value)
        except (KeyError, ValueError):
            expected = "true/false (or 1/0)" if kind is bool else {int: "an int", float: "a number"}.get(kind, "a str")
            raise app.UsageError(f"--set {assignment}: expected {expected} for {field}") from None
    return parsed


def run_config(preset, train_tsv, dev_tsv, overrides):
    """The `text` recipe for one run: one evaluation at the end, no truncation, no export."""
    config = load_config("text")
    config.update(model=preset, dataset="tsv", train_tsv=train_tsv, dev_tsv=dev_tsv, seed=0,
                  train_steps=FLAGS.train_steps, max_train_minutes=FLAGS.max_train_minutes,
                  steps_per_epoch=FLAGS.train_steps, num_epochs=1000, early_stopping_patience=0,
                  max_source_length=MAX_TOKENS, max_target_length=MAX_TOKENS, max_eval_sentences=0,
                  final_beam_width=1, num_samples=0, verbose=0, export=False)
    if FLAGS.cpu_model:
        config.update(CPU_MODEL)
    config.update(overrides)
    return config


def train_and_translate(config, workdir, sources):
    """Trains one run and translates `sources` with its best model; returns (results, hypotheses, seconds)."""
    import keras

    from zoo.inference import KerasTranslator
    from zoo.training import build_tokenizers, train_and_evaluate

    results = train_and_evaluate(config, workdir, print_fn=lambda line: None)
    model = keras.models.load_model(os.path.join(workdir, "best.keras"), compile=False)
    source_tokenizer, target_tokenizer = build_tokenizers(config, [], os.path.join(workdir, "vocab"))
    translator = KerasTranslator(model, source_tokenizer, target_tokenizer, length_penalty=config.length_penalty)
    started = time.monotonic()
    hypotheses = translator.translate(sources, beam_width=FLAGS.beam_width, batch_size=64)
    return results, hypotheses, time.monotonic() - started


def score_buckets(hypotheses, test, bounds):
    """Corpus sacreBLEU of the whole test set and of each bucket (None where a bucket is empty)."""
    from zoo import metrics

    overall = metrics.score(hypotheses, [target for _, target in test])
    by_bucket = []
    for index in range(len(bounds)):
        rows = [(h, t) for h, (s, t) in zip(hypotheses, test) if bucket_of(words(s), bounds) == index]
        by_bucket.append(metrics.score(*zip(*rows)).bleu if rows else None)
    return overall, by_bucket


def prepare(root):
    """Writes the length-limited training sets and the dev subset; returns (paths, test pairs, sizes)."""
    from zoo.data import read_tsv, write_tsv

    train = read_tsv(os.path.join(FLAGS.data_dir, "train.tsv"))
    dev = read_tsv(os.path.join(FLAGS.data_dir, "dev.tsv"))[: FLAGS.dev_sentences]
    test = read_tsv(os.path.join(FLAGS.data_dir, "test.tsv"))[: FLAGS.test_sentences or None]
    os.makedirs(root, exist_ok=True)
    paths = {"dev": write_tsv(os.path.join(root, "dev.tsv"), dev)}
    sizes = {"train": len(train), "dev": len(dev), "test": len(test)}
    for limit in map(int, FLAGS.max_words):
        kept = [pair for pair in train if words(pair[0]) <= limit]
        paths[limit] = write_tsv(os.path.join(root, f"train_{limit}.tsv"), kept)
        sizes[f"train_{limit}"] = len(kept)
    return paths, test, sizes


def main(argv):
    corpus_files(FLAGS.data_dir, ["train.tsv", "dev.tsv", "test.tsv"])
    positive_integers("max_words", FLAGS.max_words, example="30,50")
    overrides = settings()
    import zoo.models

    unknown = [preset for preset in FLAGS.presets if preset not in zoo.models.presets()]
    if unknown:
        raise app.UsageError(f"--presets: unknown preset(s) {unknown}; expected some of {zoo.models.presets()}")
    root = FLAGS.workdir or tempfile.mkdtemp(prefix="long_sentences_")
    paths, test, sizes = prepare(os.path.join(root, "data"))
    bounds = buckets(FLAGS.bucket_width, FLAGS.last_bucket)
    counts = [0] * len(bounds)
    for source, _ in test:
        counts[bucket_of(words(source), bounds)] += 1
    report = {
        "experiment": "BLEU by source length, RNNenc vs RNNsearch (Bahdanau et al., 2015, figure 2)",
        "command": " ".join(["python", "benchmarks/long_sentences.py"] + sys.argv[1:]),
        "data_dir": FLAGS.data_dir, "sentences": sizes, "beam_width": FLAGS.beam_width,
        "budget": {"train_steps": FLAGS.train_steps, "max_train_minutes": FLAGS.max_train_minutes},
        "buckets": [dict(label=label, min_words=lo, max_words=hi, sentences=n)
                    for (lo, hi, label), n in zip(bounds, counts)],
        "cpu_count": os.cpu_count(), "machine": machine.describe(), "runs": [],
    }  # fmt: skip
    for preset in FLAGS.presets:
        for limit in map(int, FLAGS.max_words):
            config = run_config(preset, paths[limit], paths["dev"], overrides)
            name = f"{NAMES.get(preset, preset)}-{limit}"
            cpu = time.process_time()
            results, hypotheses, decode_seconds = train_and_translate(
                config, os.path.join(root, "runs", name), [source for source, _ in test])
            cpu = time.process_time() - cpu
            overall, by_bucket = score_buckets(hypotheses, test, bounds)
            report["runs"].append(dict(
                name=name, preset=preset, max_train_words=limit, train_pairs=sizes[f"train_{limit}"],
                params=results["params"], train_steps=results["train_steps"],
                train_seconds=round(results["train_seconds"], 1), dev_bleu_greedy=results["bleu"],
                test_bleu=overall.bleu, test_chrf=overall.chrf, bleu_by_length=by_bucket,
                decode_seconds=round(decode_seconds, 1), cpu_seconds=round(cpu, 1),
                load_average=round(os.getloadavg()[0], 1),
            ))  # fmt: skip
            recipe = {k: v for k, v in config.to_dict().items() if k not in ("model", "train_tsv")}
            report.update(bleu_signature=overall.bleu_signature, config=recipe)
            report["cpu_minutes_total"] = round(sum(run["cpu_seconds"] for run in report["runs"]) / 60, 1)
            write_json(FLAGS.out, report)
            print(f"{name}: test BLEU {overall.bleu:.2f}, by length "
                  + " ".join("-" if b is None else f"{b:.1f}" for b in by_bucket), flush=True)
    write_figure(report, FLAGS.png or os.path.splitext(FLAGS.out)[0] + ".png")


def write_json(path, report):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(report, f, indent=1)
        f.write("\n")


def write_figure(report, path):
    """The paper's layout: BLEU against source length, one curve per run."""
    from zoo import plot

    figure = plot.bleu_by_length_figure(
        [b["label"] for b in report["buckets"]], {run["name"]: run["bleu_by_length"] for run in report["runs"]},
        counts=[b["sentences"] for b in report["buckets"]],
        title=f"the same budget per model ({_budget(report['budget'])}), beam {report['beam_width']}",
    )
    plot.save_figure(figure, path)
    print(f"wrote {FLAGS.out} and {path}", flush=True)


def _budget(budget):
    steps = f"{budget['train_steps']} steps"
    return f"{steps} or {budget['max_train_minutes']:g} min" if budget["max_train_minutes"] else steps


if __name__ == "__main__":
    app.run(main)
