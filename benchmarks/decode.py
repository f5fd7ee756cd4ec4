"""Decoding speed: sentences per second of greedy and beam search, as JSON.

    python benchmarks/decode.py                                  # random reference-size model
    python benchmarks/decode.py --workdir runs/fr_en --tsv dev.tsv
    python benchmarks/decode.py --workdir runs/fr_en --tsv test.tsv --shortlist 20:1000 --shortlist_tsv train.tsv
    python benchmarks/decode.py --workdir runs/fr_en --tsv test.tsv --sentences 0 --bleu --modes graph \
        --batch_sizes 64 --beam_widths 5 --stopping exact,approximate --repeats 1   # speed and test BLEU

Times greedy search, sampling and beam search (widths `--beam_widths`, each stopping rule of
`--stopping`: `exact`, `approximate`; docs/decoding.md) at batch sizes
`--batch_sizes`, eagerly, as a `tf.function` graph (one graph for every beam width:
the width is a run-time tensor) and compiled with XLA (`jit_compile=True`), after
one untimed call that traces and compiles (under XLA one per batch shape, each batch padded to a
multiple of 16 source tokens: one compilation per width bucket, not per source length). Reports
sentences/s, the cost of each search per sentence relative to greedy at the same batch size and mode, in wall
time and in process CPU time (steadier on a shared machine; both the fastest of
`--repeats`), and the peak resident memory growth during each measurement. The repeats of
every search at a mode and batch size are interleaved (greedy, beam 5, ..., greedy, beam 5,
...), so that a ratio compares runs made under the same load: each row also keeps every
repeat's seconds (`repeat_seconds`) and its cost over greedy's in each repeat
(`paired_costs_vs_greedy`), whose median the summary gives beside the fastest-over-fastest
ratio (`wall_paired_median` beside `wall`), and the share of each repeat's CPU demand that the
hypervisor gave to other guests (`repeat_steal_of_demand`, `zoo.machine.cpu_shares`).

With `--masked_greedy` greedy search is also timed as it was before it took its argmax from
the whole row (row `greedy_masked`: PAD and BOS masked in every row at every step, a pass
over the logits; docs/decoding.md), interleaved with the rest: its `cost_vs_greedy` is the
shipped greedy's speed-up, and its translations are the same.

The timed sentences are batched in order of source length (`--sort_by_length`, as `zoo-eval`
and `zoo-translate` batch them); `--nosort_by_length` keeps the file's order, where a batch
decodes until its longest sentence is done.

With `--bleu` every row (but eager ones) also holds the sacreBLEU and chrF of its best
translations of the timed sentences against `--tsv`'s references (`--sentences 0`: all of
them), so that each setting's speed and its translation quality come from the same run; BLEU
uses the workdir's sacreBLEU tokenizer (its `bleu_tokenize`, as `zoo-eval` does; the report's
`bleu_tokenize`).

With `--profile` each graph or xla row's batches run once more, untimed, under TensorFlow's
profiler: its `profile` gives the ops' time per batch in core-milliseconds (a core busy for
one millisecond), by op type, and the matrix products' part (`benchmarks/step_profile.py`);
the summary's beam 5 rows add `products` and `ops`, beam 5's products' and all ops' time over
greedy's. Where beam 5's products alone took more than 2.5 times greedy's time with all its ops,
no saving outside them brings beam 5 to 2.5x as its products run now (`--flops` below says how
far they are from the machine's peak).

With `--flops` each graph or xla row's batches also run once more, untimed, through a model
that counts the rows every step computed (`benchmarks/decode_flops.py`): its `matmul` gives the
row-steps, the matrix products' GFLOP of the rows it ran (`zoo.models.flops`' terms: the
encoder over the padded batch, each row-step's decoder, attention and output projection over
its logit columns), their rate over the row's timed seconds and its `peak_fraction` of the
matmul peak in the model's compute dtype measured in the same process
(`matmul_peak_gflops`, `benchmarks/matmul_peak.py`), and `seconds_at_peak`, the products' time
at that peak. The summary's beam 5 rows add `matmul_gflop`, beam 5's products over greedy's,
and `cost_at_peak`, beam 5's products at the peak over greedy's measured time: the cost the
same search cannot go under on this machine unless its products beat the peak.

With `--shortlist K:FREQUENT,...` (and `--workdir`) every search is also timed with each
vocabulary selection table (`zoo.decoding.Shortlist`), learned from `--shortlist_tsv` (the
training pairs) with the workdir's tokenizers; its rows say `shortlist`, the mean number of
target ids a batch scores (`mean_candidates`, of `target_vocab_size`) and the speed-up over
the full vocabulary at the same mode, batch size and search, in wall time (`speedup_vs_full`)
and in CPU time (`cpu_speedup_vs_full`). Under XLA a table scores a number of ids fixed by
the batch's shape (`Shortlist(static_shapes=True)`), at batch 64 the whole vocabulary.

Without `--workdir` the model is `luong_general` at reference size (bi-LSTM
encoder 2 x 256, LSTM decoder 512, Luong general attention, `--vocab_size` per
side) with random weights. Speed does not depend on the weights except through
when the end token appears, so the end token is then disabled and every
hypothesis runs to `--max_length` tokens: greedy and beam search do the same
number of steps, and the JSON says so.
"""

import json
import os
import resource
import statistics
import sys
import tempfile
import threading
import time

from absl import app, flags
from flag_checks import model_files, positive_integers

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from zoo import machine  # noqa: E402  (standard library only: cheap)
from zoo.constants import BEAM_STOPPING, DEFAULT_LENGTH_PENALTY  # noqa: E402  (standard library only: cheap)

FLAGS = flags.FLAGS
# XLA compiles a search once per batch shape: at batch 1 one compilation per source length would
# follow (hundreds over a test set, each adding to the process' memory until LLVM runs out), so under
# XLA the batches are padded to widths that are multiples of this.
XLA_WIDTH_MULTIPLE = 16
flags.DEFINE_string("workdir", None, "a zoo-train workdir (default: a random reference-size model)")
flags.DEFINE_string("tsv", None, "sources to translate (first column), needed with --workdir")
flags.DEFINE_string("preset", "luong_general", "preset of the random model")
flags.DEFINE_integer("vocab_size", 8000, "vocabulary size per side of the random model", lower_bound=1)
flags.DEFINE_integer("source_length", 25, "source tokens per sentence of the random model", lower_bound=1)
flags.DEFINE_integer("max_length", 30, "target tokens decoded per sentence of the random model", lower_bound=1)
flags.DEFINE_list("batch_sizes", ["1", "64"], "batch sizes")
flags.DEFINE_list("beam_widths", ["1", "5", "10"], "beam widths")
MODES = ("eager", "graph", "xla")
flags.DEFINE_list("modes", list(MODES), "eager, graph (tf.function) and/or xla")
flags.DEFINE_float("length_penalty", DEFAULT_LENGTH_PENALTY, "alpha of the beam search")
flags.DEFINE_list("stopping", ["exact"], "beam search stopping rules timed: exact and/or approximate "
                  "(rows beamK and beamK_approximate)")
flags.DEFINE_bool("alignments", False, "keep each search's attention alignments (the beam_search signature "
                  "does; serving_default, greedy, sample and zoo-eval keep none)")
flags.DEFINE_bool("compact", True, "drop finished sentences from the loop's batch (zoo.decoding.decode's default; "
                  "--nocompact runs every row to the end of its batch)")
flags.DEFINE_bool("sampling", True, "also time zoo.decoding.Sampling (fixed seed)")
flags.DEFINE_bool("masked_greedy", False, "also time greedy search masking PAD and BOS in every row at every step "
                  "(row greedy_masked: Greedy before it took its argmax from the whole row, docs/decoding.md)")
flags.DEFINE_float("sampling_temperature", 1.0, "temperature of the timed sampling")
flags.DEFINE_integer("sampling_top_k", 0, "top_k of the timed sampling (0: the whole vocabulary)", lower_bound=0)
flags.DEFINE_integer("sentences", 128, "sentences decoded per measurement (at least one batch); 0 = every "
                     "sentence of --tsv (the last batch partial)", lower_bound=0)
flags.DEFINE_bool("bleu", False, "with --workdir: also score each search's translations of the timed sentences "
                  "against --tsv's references (second column) with sacreBLEU (BLEU, chrF)")
flags.DEFINE_bool("sort_by_length", True, "batch the timed sentences in order of source length, as zoo-eval "
                  "and zoo-translate do (a batch decodes until its slowest sentence is done); "
                  "--nosort_by_length: in file order")
flags.DEFINE_integer("eager_sentences", 16, "sentences per eager measurement (eager is slow)", lower_bound=1)
flags.DEFINE_integer("repeats", 3, "timed repetitions; the fastest counts (a shared machine is noisy)", lower_bound=1)
flags.DEFINE_list("shortlist", [], "vocabulary selection tables K:FREQUENT also timed (needs --workdir and "
                  "--shortlist_tsv), e.g. 20:1000,50:2000")
flags.DEFINE_string("shortlist_tsv", None, "training pairs (source<TAB>target) the --shortlist tables are learned from")
flags.DEFINE_bool("profile", False, "after each graph or xla row is timed, its batches once more under TensorFlow's "
                  "profiler: the row's `profile` (op time per batch by op type, the matrix products' share; "
                  "step_profile.py) and, in the summary, beam 5's products' time over greedy's")
flags.DEFINE_bool("flops", False, "after each graph or xla row is timed, its batches once more (untimed) through a "
                  "model that counts the rows each step computed: the row's `matmul` gives its products' GFLOP and "
                  "their fraction of the machine's matmul peak, measured in the same run (benchmarks/decode_flops.py)")
flags.DEFINE_string("profile_dir", None, "where the profiler's traces go (default: a temporary folder)")


class PeakMemory:
    """Samples this process' resident memory in a thread: the peak growth over a block, in MiB."""

    def __init__(self, interval=0.005):
        self.interval, self.peak, self.running = interval, 0, False

    @staticmethod
    def resident():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

    def _sample(self):
        while self.running:
            self.peak = max(self.peak, self.resident())
            time.sleep(self.interval)

    def __enter__(self):
        self.start, self.peak, self.running = self.resident(), self.resident(), True
        self.thread = threading.Thread(target=self._sample, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *unused):
        self.running = False
        self.thread.join()
        self.growth_mib = (self.peak - self.start) / 2**20


def load_model(batch_sizes):
    """`(model, sources, max_length, setting, scorer)`: a trained workdir or a reference-size random model;
    `scorer(sentence_indices, results)` gives sacreBLEU and chrF of the searches' best translations
    with `--bleu` (else None)."""
    import numpy as np
    import tensorflow as tf

    import zoo.models
    from zoo.data.vocabulary import EOS_ID

    if FLAGS.workdir:
        from zoo.models.workdir import decoding_settings, load_workdir

        if not FLAGS.tsv:
            raise app.UsageError("--workdir needs --tsv: the sentences to translate (first column).")
        model, source_tokenizer, target_tokenizer, config = load_workdir(FLAGS.workdir)
        settings = decoding_settings(config)  # the caps its export decodes with, as zoo-eval does
        max_length, max_source_length = settings.get("max_target_length"), settings.get("max_source_length")
        with open(FLAGS.tsv, encoding="utf-8") as f:
            rows = [line.rstrip("\n").split("\t") for line in f if line.strip()]
        texts = [row[0] for row in rows]
        sources = source_tokenizer.encode(tf.constant(texts)).to_tensor().numpy().astype(np.int32)
        sources = sources[:, :max_source_length] if max_source_length else sources  # longer ones cut, not dropped
        setting = {"model": FLAGS.workdir, "weights": "trained", "sentences_from": FLAGS.tsv,
                   "end_token": "enabled: each sentence stops when its search does",
                   "max_target_length": max_length, "max_source_length": max_source_length}
        scorer = None
        if FLAGS.bleu:
            if any(len(row) < 2 for row in rows):
                raise app.UsageError(f"--bleu: {FLAGS.tsv} has lines without a reference (second column)")
            setting["bleu_tokenize"] = config.get("bleu_tokenize") or "13a"  # as zoo-eval scores this workdir
            scorer = lambda order, results: bleu_of(target_tokenizer, results,  # noqa: E731
                                                    [rows[i][1] for i in order], setting["bleu_tokenize"])
        return model, sources, max_length, setting, scorer
    base = zoo.models.build(FLAGS.preset, FLAGS.vocab_size, FLAGS.vocab_size, dropout=0.0)
    model = EndlessModel(base, EOS_ID)
    model.count_params = base.count_params
    rng = np.random.default_rng(0)
    sources = rng.integers(4, FLAGS.vocab_size, size=(max(max(batch_sizes), FLAGS.sentences, FLAGS.eager_sentences),
                                                      FLAGS.source_length)).astype(np.int32)
    setting = {"model": f"{FLAGS.preset} (random weights, reference size)", "weights": "random",
               "vocab_size": FLAGS.vocab_size, "source_length": FLAGS.source_length,
               "end_token": f"disabled: every hypothesis runs max_length={FLAGS.max_length} steps"}
    if FLAGS.bleu:
        raise app.UsageError("--bleu needs --workdir and a --tsv with references")
    return model, sources, FLAGS.max_length, setting, None


def bleu_of(target_tokenizer, results, references, bleu_tokenize="13a"):
    """sacreBLEU (with the tokenizer `bleu_tokenize`) and chrF of the best hypotheses of `results`
    (the batches, in order) against the first references."""
    from zoo import metrics

    hypotheses = [line.decode("utf-8") for result in results
                  for line in target_tokenizer.decode(result.ids[:, 0, :]).numpy().tolist()]
    scores = metrics.score(hypotheses, references[:len(hypotheses)], bleu_tokenize=bleu_tokenize)
    return {"bleu": round(scores.bleu, 2), "chrf": round(scores.chrf, 2)}


def shortlist_tables():
    """`{label: ShortlistTable}` of `--shortlist`, learned from `--shortlist_tsv` with the workdir's tokenizers."""
    if not FLAGS.shortlist:
        return {}
    if not (FLAGS.workdir and FLAGS.shortlist_tsv):
        raise app.UsageError("--shortlist needs --workdir (its tokenizers) and --shortlist_tsv (training pairs).")
    from zoo.constants import VOCAB_DIR
    from zoo.data import learn_shortlist_from_texts, load_tokenizer

    with open(FLAGS.shortlist_tsv, encoding="utf-8") as f:
        pairs = [tuple(line.rstrip("\n").split("\t")[:2]) for line in f if "\t" in line]
    tokenizers = [load_tokenizer(os.path.join(FLAGS.workdir, VOCAB_DIR, side)) for side in ("source", "target")]
    tables = {}
    for setting in FLAGS.shortlist:
        parts = setting.split(":")
        if len(parts) != 2 or not all(part.isdigit() for part in parts) or int(parts[0]) < 1:
            raise app.UsageError(f"--shortlist {setting!r}: expected K:FREQUENT with K >= 1 and FREQUENT >= 0, "
                                 "e.g. 20:1000")
        k, frequent = (int(part) for part in parts)
        tables[f"k{k}_frequent{frequent}"] = learn_shortlist_from_texts(pairs, *tokenizers, k, frequent)
    return tables


def warm_up(run, batches, every_shape=False):
    """The untimed first calls of `run` (tracing, compiling): their seconds.

    `every_shape`: one batch of each distinct shape (XLA compiles once per shape), not only
    the first batch."""
    started = time.perf_counter()
    firsts = {tuple(b.shape): b for b in reversed(batches)} if every_shape else {None: batches[0]}
    for batch in firsts.values():
        run(batch).ids.numpy()
    return time.perf_counter() - started


def time_interleaved(runs, batches):
    """Times each of `runs` over `batches` `--repeats` times, the repeats interleaved (run 1, run 2, ...,
    run 1, run 2, ...), so that a shared machine's changing load falls on all of them alike and
    their ratios (beam over greedy) are taken under the same conditions.

    Returns, per run, `(seconds, cpu_seconds, decoded, peak_rss_growth_mib, repeat_seconds, repeat_steal)`:
    the fastest repetition's wall and CPU seconds, the last repetition's results, the largest
    resident memory growth during any of its repetitions, every repetition's wall seconds in order
    and the share of each one's CPU demand the hypervisor took (`zoo.machine.cpu_shares`' `steal_of_demand`,
    None off Linux)."""
    timings = [[[], [], None, 0.0, []] for _ in runs]
    for _ in range(FLAGS.repeats):
        for run, timing in zip(runs, timings):
            with PeakMemory() as memory:
                started, cpu_started, ticks = time.perf_counter(), time.process_time(), machine.cpu_ticks()
                decoded = [run(b) for b in batches]
                for result in decoded:
                    result.lengths.numpy()
                timing[0].append(time.perf_counter() - started)
                timing[1].append(time.process_time() - cpu_started)
                timing[4].append((machine.cpu_shares(ticks, machine.cpu_ticks()) or {}).get("steal_of_demand"))
            timing[2], timing[3] = decoded, max(timing[3], memory.growth_mib)
    return [(min(seconds), min(cpu), decoded, growth, seconds, steal) for seconds, cpu, decoded, growth, steal in timings]


def measured(timing, batches, warmup, scorer=None):
    """A row's figures from `time_interleaved`'s `timing` of it; `scorer(results)`: sacreBLEU and chrF
    of the batches' best translations, or None."""
    import numpy as np

    seconds, cpu_seconds, decoded, growth, repeats, steal = timing
    count = sum(len(b) for b in batches)
    lengths = [r.lengths.numpy() for r in decoded]
    return {
        "sentences": count, "seconds": round(seconds, 4), "sentences_per_second": round(count / seconds, 2),
        "repeat_seconds": [round(value, 4) for value in repeats], "repeat_steal_of_demand": steal,
        "cpu_seconds_per_sentence": round(cpu_seconds / count, 5),
        "mean_best_length": round(float(np.mean([l[:, 0].mean() for l in lengths])), 2),
        "first_call_seconds": round(warmup, 2), "peak_rss_growth_mib": round(growth, 1),
        **(scorer(decoded) if scorer else {}),
    }


def profile_search(run, batches):
    """`run` over `batches` once under TensorFlow's profiler (after `time_interleaved`: traced already):
    the products' and all ops' core-milliseconds per batch, and `per_batch`: `step_profile.summarize` of its
    trace with a batch as its step."""
    import step_profile

    log_dir = tempfile.mkdtemp(prefix="decode_profile_", dir=FLAGS.profile_dir)
    trace, seconds = step_profile.profiled(lambda: [run(b).ids.numpy() for b in batches], log_dir)
    profile = step_profile.summarize(trace, len(batches), seconds, os.cpu_count() or 1)
    products = round(sum(profile["product_ms_per_step"].values()), 2)
    return {"product_core_ms_per_batch": products, "op_core_ms_per_batch": profile["core_ms_per_step"]["ops"],
            "per_batch": profile}


def run_of(mode, width, search, graph, graph_single):
    """The call `run(source_ids)` of one search (`width`: None or a strategy, or `(beam width, stopping)`) in
    `mode`, from `searches_of`'s functions."""
    import tensorflow as tf

    if mode == "eager":
        return lambda s: search(s, *width) if isinstance(width, tuple) else search(s, width)
    if mode == "xla":
        return tf.function(lambda s: search(s, *width) if isinstance(width, tuple) else search(s, width),
                           jit_compile=True)
    if isinstance(width, tuple):  # the one graph of every beam width (per stopping rule)
        return lambda s: graph[width[1]](s, width[0])
    return graph_single[width]


def count_search(counter, run, batches, seconds, peak):
    """`run` (a search through the `CountingModel` `counter`) over `batches` once, untimed: the row-steps it
    computed, its products' GFLOP (benchmarks/decode_flops.py), their rate over the timed `seconds` and
    that rate's fraction of the matmul `peak` (GFLOP/s), and the seconds the products would take at the peak."""
    from decode_flops import matmul_flops

    counter.reset()
    for batch in batches:
        run(batch).ids.numpy()
    counts = counter.read()
    gflop = matmul_flops(base_model(counter.model).get_config(), counts) / 1e9
    return {"row_steps": counts["row_steps"], "mean_columns": round(counts["row_columns"] / counts["row_steps"], 1),
            "gflop": round(gflop, 4), "gflops_per_second": round(gflop / seconds, 1),
            "peak_fraction": round(gflop / seconds / peak, 4), "seconds_at_peak": round(gflop / peak, 4)}


def add_ratios(results):
    """Each row's cost against greedy's (same mode, batch size and shortlist) and its speed-up over the
    full vocabulary; the summary: batch-64 beam 5 over greedy, and each shortlist's batch-64 speed-ups."""

    def same(row, **fields):
        keys = ("mode", "batch_size", "search", "shortlist")
        return next(r for r in results if all(r[key] == fields.get(key, row[key]) for key in keys))

    for row in results:
        greedy = same(row, search="greedy")
        row["cost_vs_greedy"] = round(greedy["sentences_per_second"] / row["sentences_per_second"], 2)
        row["cpu_cost_vs_greedy"] = round(row["cpu_seconds_per_sentence"] / greedy["cpu_seconds_per_sentence"], 2)
        row["paired_costs_vs_greedy"] = paired_costs(row, greedy)
        if row["shortlist"] != "none":
            full = same(row, shortlist="none")
            row["speedup_vs_full"] = round(row["sentences_per_second"] / full["sentences_per_second"], 2)
            row["cpu_speedup_vs_full"] = round(full["cpu_seconds_per_sentence"] / row["cpu_seconds_per_sentence"], 2)
    # The summary's beam 5 rows: batch 64, full vocabulary (the shortlists' and other batch sizes' rows
    # share their keys, and overwrote the ratios of profiles and FLOPs before they were left out here).
    summarized = [r for r in results if r["search"].startswith("beam5") and r["batch_size"] == 64
                  and r["shortlist"] == "none"]
    summary = {
        f"{r['search']}_over_greedy_batch64_{r['mode']}": {
            "wall": r["cost_vs_greedy"], "wall_paired_median": median(r["paired_costs_vs_greedy"]),
            "cpu": r["cpu_cost_vs_greedy"], "sentences_per_second": r["sentences_per_second"]}
        for r in summarized
    }
    for r in summarized:  # with --profile: how much of beam 5's cost its matrix products alone account for
        key = f"{r['search']}_over_greedy_batch64_{r['mode']}"
        if "profile" in r:
            greedy = same(r, search="greedy")["profile"]
            summary[key]["products"] = round(r["profile"]["product_core_ms_per_batch"]
                                             / greedy["product_core_ms_per_batch"], 2)
            summary[key]["ops"] = round(r["profile"]["op_core_ms_per_batch"] / greedy["op_core_ms_per_batch"], 2)
    for r in summarized:  # with --flops: beam 5's products' FLOPs over greedy's, and its cost were they at the peak
        key = f"{r['search']}_over_greedy_batch64_{r['mode']}"
        if "matmul" in r:
            greedy = same(r, search="greedy")
            summary[key]["matmul_gflop"] = round(r["matmul"]["gflop"] / greedy["matmul"]["gflop"], 2)
            summary[key]["cost_at_peak"] = round(r["matmul"]["seconds_at_peak"] / r["sentences"]
                                                 / (greedy["seconds"] / greedy["sentences"]), 2)
    for r in results:
        if r["batch_size"] == 64 and r["shortlist"] != "none":
            speedup = {"wall": r["speedup_vs_full"], "cpu": r["cpu_speedup_vs_full"]}
            summary.setdefault(f"{r['shortlist']}_speedup_batch64_{r['mode']}", {})[r["search"]] = speedup
    return summary


def paired_costs(row, greedy):
    """The row's cost per sentence over greedy's in each repetition (`time_interleaved`: a repetition times
    every search once, one after the other, so each pair ran under the same load)."""
    per_sentence = [seconds / row["sentences"] for seconds in row["repeat_seconds"]]
    greedy_per_sentence = [seconds / greedy["sentences"] for seconds in greedy["repeat_seconds"]]
    return [round(mine / theirs, 3) for mine, theirs in zip(per_sentence, greedy_per_sentence)]


def median(values):
    """The median of `values` (the mean of the middle two of an even count), to 2 decimals."""
    return round(statistics.median(values), 2)


def searches_of(model, max_length, shortlist, singles):
    """`(search, graph, graph_single)`: `search(source, width)` (width None: greedy, one of the
    strategies `singles`, or a beam width) with `shortlist`, one graph for every beam width (a
    run-time tensor) and one per other strategy."""
    import tensorflow as tf

    from zoo.decoding import BeamSearch, Greedy, Sampling, decode

    def search(source, width, stopping="exact"):
        if width is None or isinstance(width, (Greedy, Sampling)):
            strategy = width or Greedy(alignments=FLAGS.alignments)
            return decode(model, source, strategy, max_length=max_length, shortlist=shortlist, compact=FLAGS.compact)
        strategy = BeamSearch(width, length_penalty=FLAGS.length_penalty, stopping=stopping,
                              alignments=FLAGS.alignments)
        return decode(model, source, strategy, max_length=max_length, shortlist=shortlist, compact=FLAGS.compact)

    graph = {stopping: tf.function(lambda source, width, s=stopping: search(source, width, s),
                                   input_signature=[tf.TensorSpec([None, None], tf.int32), tf.TensorSpec([], tf.int32)])
             for stopping in FLAGS.stopping}  # one graph of every beam width per stopping rule
    graph_single = {strategy: tf.function(lambda source, s=strategy: search(source, s),
                                          input_signature=[tf.TensorSpec([None, None], tf.int32)])
                    for strategy in (None, *singles)}
    return search, graph, graph_single


def main(argv):
    batch_sizes = positive_integers("batch_sizes", FLAGS.batch_sizes)
    beam_widths = positive_integers("beam_widths", FLAGS.beam_widths, example="1,5")
    unknown = set(FLAGS.stopping) - set(BEAM_STOPPING)
    if unknown:
        raise app.UsageError(f"--stopping: unknown rule(s) {sorted(unknown)}; expected exact and/or approximate")
    unknown = set(FLAGS.modes) - set(MODES)  # any other name would be timed as graph, under its own label
    if unknown:
        raise app.UsageError(f"--modes: unknown mode(s) {sorted(unknown)}; expected eager, graph and/or xla")
    model_files(FLAGS.workdir, FLAGS.tsv)
    if FLAGS.profile and FLAGS.profile_dir:  # made now: a path that cannot be made fails before the timed runs
        os.makedirs(FLAGS.profile_dir, exist_ok=True)
    import numpy as np
    import tensorflow as tf

    from zoo.decoding import Greedy, Sampling, Shortlist

    class MaskedGreedy(Greedy):  # unregistered: Greedy's every-step mask, the code before `chooses_argmax`
        chooses_argmax = False

    model, sources, max_length, setting, scorer = load_model(batch_sizes)
    tables = shortlist_tables()
    counter = peak = None
    if FLAGS.flops:  # the products' FLOPs of each search, against the machine's peak measured now
        from decode_flops import CountingModel
        from matmul_peak import matmul_peak_gflops

        counter = CountingModel(model)
        dtype = base_model(model).compute_dtype
        peak = matmul_peak_gflops(dtype, "/GPU:0" if tf.config.list_logical_devices("GPU") else "/CPU:0")
        setting["matmul_peak_gflops"] = round(peak, 1)
    searches = {"greedy": None}
    for stopping in FLAGS.stopping:
        suffix = "" if stopping == "exact" else f"_{stopping}"
        searches.update({f"beam{w}{suffix}": (w, stopping) for w in beam_widths})
    sampling = Sampling(temperature=FLAGS.sampling_temperature, top_k=FLAGS.sampling_top_k, seed=0,
                        alignments=FLAGS.alignments)
    if FLAGS.sampling:
        searches["sampling"] = sampling
    if FLAGS.masked_greedy:
        searches["greedy_masked"] = MaskedGreedy(alignments=FLAGS.alignments)
    singles = [strategy for strategy in searches.values() if isinstance(strategy, (Greedy, Sampling))]
    results = []
    lists = {"none": None, **tables}
    for mode in FLAGS.modes:
        shortlists = {label: None if table is None else Shortlist(table, static_shapes=mode == "xla")
                      for label, table in lists.items()}
        runs = {label: searches_of(model, max_length, shortlist, singles) for label, shortlist in shortlists.items()}
        counted = None if counter is None else {  # the same searches through the counting model (--flops)
            label: searches_of(counter, max_length, shortlist, singles) for label, shortlist in shortlists.items()}
        for batch_size in batch_sizes:
            count = FLAGS.eager_sentences if mode == "eager" else FLAGS.sentences
            count = len(sources) if count == 0 else max(batch_size, count // batch_size * batch_size)
            count = min(count, len(sources))  # a --tsv of fewer sentences: all of them, the last batch short
            order = timed_order(sources, count)
            # Under XLA a batch's width is rounded up (one compilation per distinct shape and search).
            multiple = XLA_WIDTH_MULTIPLE if mode == "xla" else 1
            batches = [tf.constant(trimmed(sources[order[i:i + batch_size]], multiple))
                       for i in range(0, count, batch_size)]
            score = None if scorer is None or mode == "eager" else (lambda results, o=order: scorer(o, results))
            # The ids each table scores per batch (exactly; under XLA more).
            candidates = {label: {"mean_candidates": round(float(np.mean([Shortlist(table).select(b)[0].shape[0]
                                                                           for b in batches])), 1)}
                          for label, table in tables.items()}
            rows, calls, counted_calls = [], [], {}
            for name, width in searches.items():
                # Every table right after the full vocabulary.
                for label, (search, graph, graph_single) in runs.items():
                    rows.append({"mode": mode, "batch_size": batch_size, "shortlist": label,
                                 **candidates.get(label, {}), "search": name})
                    calls.append(run_of(mode, width, search, graph, graph_single))
                    if counted is not None and mode != "eager":
                        counted_calls[len(calls) - 1] = run_of(mode, width, *counted[label])
            warmups = [warm_up(run, batches, every_shape=mode == "xla") for run in calls]
            for index, (row, run, timing, warmup) in enumerate(zip(rows, calls, time_interleaved(calls, batches),
                                                                   warmups)):
                results.append({**row, **measured(timing, batches, warmup, score)})
                if FLAGS.profile and mode != "eager":
                    results[-1]["profile"] = profile_search(run, batches)
                if index in counted_calls:
                    results[-1]["matmul"] = count_search(counter, counted_calls[index], batches, results[-1]["seconds"],
                                                         peak)
                print(json.dumps(results[-1]), file=sys.stderr, flush=True)

    summary = add_ratios(results)
    print(json.dumps({
        **setting, "params": int(model.count_params()), "length_penalty": FLAGS.length_penalty,
        "target_vocab_size": int(getattr(model, "target_vocab_size", FLAGS.vocab_size)),
        "shortlists": {label: table.settings() for label, table in tables.items()},
        "shortlist_learned_from": FLAGS.shortlist_tsv if tables else None,
        "batches": "length-sorted (as zoo-eval)" if FLAGS.sort_by_length else "in file order",
        "alignments": "kept" if FLAGS.alignments else "not kept (as serving_default and zoo-eval)",
        "compact": FLAGS.compact,
        "threads": os.cpu_count(), "load_average_1min": os.getloadavg()[0], "machine": machine.describe(),
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "summary": summary, "results": results,
    }, indent=1))


def timed_order(sources, count):
    """The indices of the first `count` sentences; with --sort_by_length in the order of
    `zoo.inference.batches_by_length` (the batcher of zoo-eval and zoo-translate), by tokens."""
    import numpy as np

    if not FLAGS.sort_by_length:
        return np.arange(count)
    from zoo.inference import batches_by_length

    (order,) = batches_by_length([row[row != 0] for row in sources[:count]], count)
    return np.array(order)


def trimmed(batch, multiple=1):
    """A batch cut to its longest sentence, as a data pipeline would pad it, its width rounded up to
    a `multiple` of tokens (padding: the searches mask it, their results do not change)."""
    import numpy as np

    width = max(1, int((batch != 0).sum(1).max()))
    width = -(-width // multiple) * multiple
    if width > batch.shape[1]:
        batch = np.pad(batch, ((0, 0), (0, width - batch.shape[1])))
    return batch[:, :width]


def base_model(model):
    """The zoo model itself: `model`, or the one an `EndlessModel` wraps."""
    return model.model if isinstance(model, EndlessModel) else model


class EndlessModel:
    """Wraps a model so that the end token is never chosen: a fixed number of decoding steps."""

    def __init__(self, model, end_id):
        self.model, self.end_id = model, end_id

    def encode(self, source_ids):
        return self.model.encode(source_ids)

    def step(self, token_ids, state, memory):
        import tensorflow as tf

        log_probs, state, attention = self.model.step(token_ids, state, memory)
        is_end = tf.equal(tf.range(tf.shape(log_probs)[-1]), self.end_id)
        return tf.where(is_end, float("-inf"), log_probs), state, attention


if __name__ == "__main__":
    app.run(main)
