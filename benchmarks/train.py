"""Training speed per strategy, precision and XLA setting: real tokens per second and peak fraction, as JSON.

    python benchmarks/train.py --recipe dates_bahdanau --strategy one_device,mirrored --cpu_replicas 2 \
        --precision float32 --jit_compile false --output benchmarks/results/train_dates_cpu.json
    python benchmarks/train.py --recipe text --train_tsv train.tsv --strategy auto --precision auto,float32 \
        --jit_compile true,false --output benchmarks/results/train_text_gpu.json

For each combination it builds the recipe's model under the strategy's scope, runs
`--warmup_steps` steps (tracing; with XLA, one compilation per batch shape met), then
times `--steps` steps of `model.fit` and counts the real (non-pad) source and target
tokens of exactly the batches it trained on. The JSON also gives the number of distinct
batch shapes of one epoch: XLA compiles the training step once per shape.

Each run also gives `model_flops_per_token`, the matmul FLOPs of a training step per real
token (`zoo.models.flops.train_flops_per_token` at the timed batches' mean real source and
target lengths; `model_flops_per_token_by_term` splits them by `forward_flops`' terms),
`matmul_peak_gflops`, the GFLOP/s of 2048 x 2048 matmuls measured in the same process on
the strategy's first device in the run's compute dtype (float32 for float32, bfloat16 for
mixed_bfloat16, float16 for mixed_float16; on a GPU float32 matmuls use TF32 as the
training's do; on a CPU the better of one product at a time and one per core at once),
times the number of accelerator replicas, and
`peak_fraction = train_tokens_per_second * model_flops_per_token / (matmul_peak_gflops * 1e9)`,
and `cpu_shares`, how the machine's CPU time went during the timed steps (`zoo.machine.cpu_shares`:
busy, idle, and stolen by the hypervisor for other guests, which slows a run whatever its code).

With `--profile_steps N`, the first N timed batches run again after the timed steps, under
TensorFlow's profiler (which slows them: with N equal to `--steps`, compare the profile's
`wall_ms_per_step` with the run's), and each run's `profile` splits a step's time into the
ops' own time, the executor's and idle cores, the ops' time by region (the encoder's and
decoder's time loops, forward and backward, and everything outside them) and by op type, and
how long one thread ran ops alone, by region: the step's serial part (`benchmarks/step_profile.py`).
Its `peak_fraction_if_only_products_ran` bounds what removing every other op's time could
give: the step's model FLOPs over the peak, against the products' profiled time spread over
all the cores.
"""

import json
import os
import sys
import tempfile
import time

from absl import app, flags

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from matmul_peak import matmul_peak_gflops  # noqa: E402  (this folder; TensorFlow when a peak is measured)
from zoo import machine  # noqa: E402  (standard library only: cheap)
from zoo.constants import ENCODER_IMPLEMENTATIONS, PRECISIONS, STRATEGIES  # noqa: E402  (the same)

FLAGS = flags.FLAGS
flags.DEFINE_string("recipe", "text", "recipe name or .py config")
flags.DEFINE_string("train_tsv", None, "training pairs (default: the recipe's data)")
flags.DEFINE_string("model", None, "preset overriding the recipe's")
flags.DEFINE_integer("batch_size", None, "global sentences per batch (default: the recipe's)")
flags.DEFINE_integer("steps", 100, "timed training steps")
flags.DEFINE_integer("warmup_steps", 5, "untimed steps first (tracing, XLA compilations)")
flags.DEFINE_list("strategy", ["one_device"], "strategies timed one after the other (docs/scaling.md)")
flags.DEFINE_list("precision", ["float32"], "compute policies: float32, mixed_bfloat16, mixed_float16, auto")
flags.DEFINE_list("jit_compile", ["false"], "XLA settings: true, false, auto")
flags.DEFINE_list("encoder_implementation", ["zoo"], "encoders timed: zoo (own cells) and/or keras (Keras' "
                  "LSTM/GRU layers, cuDNN on a GPU; always without XLA)")
flags.DEFINE_string("static_shapes", "auto", "auto (with XLA or several replicas), true or false")
flags.DEFINE_integer("cpu_replicas", 0, "split the CPU into this many logical devices for mirrored, each op on "
                     "cores/N threads, as zoo-train's --config.cpu_replicas (docs/scaling.md); applies to every "
                     "strategy timed in the process")
flags.DEFINE_integer("sampled_vocabulary", None, "each batch's softmax over its target ids and random others, this "
                     "many in all, as zoo-train's --config.sampled_vocabulary (default: the recipe's; 0: every id)")
flags.DEFINE_string("output", None, "also write the JSON to this file")
flags.DEFINE_integer("profile_steps", 0, "after the timed steps, the first this many of their batches again, under "
                     "TensorFlow's profiler: the run's `profile` says where a step's time goes (step_profile.py)")
flags.DEFINE_string("profile_dir", None, "where the profiler's trace goes (default: a temporary folder)")


def _batches(trainer, config, pairs, tokenizers, static_shapes):
    """Warmup and timed batches, timed real tokens, their mean real (source, target) lengths, shapes of an epoch."""
    import tensorflow as tf

    from zoo.training.sampled_vocabulary import with_sampled_vocabulary

    dataset = trainer.make_train_dataset(config, pairs, *tokenizers, seed=0, static_shapes=static_shapes)
    shapes = {tuple(tuple(t.shape) for t in tf.nest.flatten(batch)) for batch in dataset}
    dataset = with_sampled_vocabulary(dataset.repeat(), tokenizers[1].vocab_size, config.sampled_vocabulary)
    batches = list(dataset.take(FLAGS.warmup_steps + FLAGS.steps))
    timed = batches[FLAGS.warmup_steps :]
    source = sum(int(tf.math.count_nonzero(x)) for (x, *_), _ in timed)
    target = sum(int(tf.math.count_nonzero(y)) for _, y in timed)
    sentences = sum(int(tf.math.count_nonzero(tf.reduce_any(y != 0, axis=-1))) for _, y in timed)
    return dataset.element_spec, batches, source + target, (source / sentences, target / sentences), len(shapes)


def _peak(strategy, dtype):
    """The matmul peak of the devices the strategy trains on: one device's, times the accelerator replicas."""
    from zoo.training import distribute

    if distribute.accelerator(strategy) == "cpu":  # the default strategy names no devices; CPU replicas share the cores
        return matmul_peak_gflops(dtype, "/device:CPU:0")
    devices = strategy.extended.worker_devices
    return matmul_peak_gflops(dtype, devices[0]) * len(devices)


def _time(trainer, strategy, config, tokenizers, spec, batches, lengths, jit_compile):
    """Seconds of the warmup and of the timed steps, the last loss, the FLOPs per token and the matmul peak."""
    import tensorflow as tf

    from zoo.models.flops import TRAIN_TO_FORWARD, forward_flops, train_flops_per_token

    from zoo.training import distribute

    def data(part):
        return tf.data.Dataset.from_generator(lambda: iter(part), output_signature=spec)

    warmup, timed = batches[: FLAGS.warmup_steps], batches[FLAGS.warmup_steps :]
    with strategy.scope():  # fit under it, as zoo-train's (zoo.training.placement.fit)
        model = trainer.build_model(config, tokenizers[0].vocab_size, tokenizers[1].vocab_size)
        trainer.compile_model(model, config, jit_compile=jit_compile)
        if distribute.is_split_cpu(strategy):  # whose first batch may split unevenly
            distribute.build_for_fit(model, batches[0])
        started = time.perf_counter()
        model.fit(data(warmup), verbose=0)
        compiled, ticks = time.perf_counter(), machine.cpu_ticks()
        history = model.fit(data(timed), verbose=0)
        finished, shares = time.perf_counter(), machine.cpu_shares(ticks, machine.cpu_ticks())
        profile = {}
        if FLAGS.profile_steps:
            import step_profile

            log_dir = FLAGS.profile_dir or tempfile.mkdtemp(prefix="train_profile_")
            profile = {"profile": step_profile.profiled_fit(model, data(timed[: FLAGS.profile_steps]),
                                                            FLAGS.profile_steps, log_dir)}
    by_term = {term: TRAIN_TO_FORWARD * flops / sum(lengths) for term, flops in forward_flops(model, *lengths).items()}
    flops_per_token = train_flops_per_token(model, *lengths)
    sampled = [int(tf.shape(x[2])[1]) for x, _ in timed if len(x) > 2]
    if sampled:  # the output projection over the mean sampled vocabulary, not the whole one
        whole = by_term["output_projection"]
        by_term["output_projection"] = whole * sum(sampled) / len(sampled) / tokenizers[1].vocab_size
        flops_per_token -= whole - by_term["output_projection"]
    return dict(replicas=strategy.num_replicas_in_sync, precision=model.dtype_policy.name,
                warmup_seconds=compiled - started, seconds=finished - compiled, cpu_shares=shares,
                loss=float(history.history["loss"][-1]), params=int(model.count_params()),
                model_flops_per_token=flops_per_token, model_flops_per_token_by_term=by_term,
                **({"sampled_vocabulary_mean_ids": sum(sampled) / len(sampled)} if sampled else {}),
                matmul_peak_gflops=_peak(strategy, model.dtype_policy.compute_dtype), **profile)


def _check_flags():
    """Every flag's value, checked before anything is built: a clear one-line error for a bad one."""
    for name, values, allowed in (("precision", FLAGS.precision, PRECISIONS), ("strategy", FLAGS.strategy, STRATEGIES),
                                  ("jit_compile", FLAGS.jit_compile, ("true", "false", "auto")),
                                  ("encoder_implementation", FLAGS.encoder_implementation, ENCODER_IMPLEMENTATIONS),
                                  ("static_shapes", [FLAGS.static_shapes], ("true", "false", "auto"))):
        unknown = [value for value in values if value not in allowed]
        if unknown or not values:
            raise app.UsageError(f"--{name}={','.join(values)}: expected one or more of {list(allowed)}")
    for name, least in (("steps", 1), ("warmup_steps", 0), ("cpu_replicas", 0), ("batch_size", 1),
                        ("profile_steps", 0), ("sampled_vocabulary", 0)):
        value = getattr(FLAGS, name)
        if value is not None and value < least:
            raise app.UsageError(f"--{name}={value}: expected an integer >= {least}")
    if FLAGS.profile_steps > FLAGS.steps:
        raise app.UsageError(f"--profile_steps={FLAGS.profile_steps}: at most --steps ({FLAGS.steps}), the timed "
                             "batches it runs again")
    if FLAGS.train_tsv and not os.path.isfile(FLAGS.train_tsv):
        raise app.UsageError(f"--train_tsv={FLAGS.train_tsv}: no such file")


def main(argv):
    _check_flags()
    import tensorflow as tf

    from recipes import load_config
    from zoo.training import distribute, trainer

    if FLAGS.cpu_replicas > 1:  # as zoo-train's --config.cpu_replicas does, for every strategy timed here
        distribute.split_cpu(FLAGS.cpu_replicas)

    try:
        config = load_config(FLAGS.recipe)
    except (ValueError, FileNotFoundError) as error:
        raise app.UsageError(f"--recipe={FLAGS.recipe}: {error}") from None
    if FLAGS.train_tsv:
        config.train_tsv, config.dataset = FLAGS.train_tsv, "tsv"
    config.model = FLAGS.model or config.model
    config.batch_size = FLAGS.batch_size or config.batch_size
    if FLAGS.sampled_vocabulary is not None:
        config.sampled_vocabulary = FLAGS.sampled_vocabulary
    pairs = trainer.load_data(config)["train"]
    tokenizers = trainer.build_tokenizers(config, pairs, tempfile.mkdtemp())
    runs = []
    for strategy_name in FLAGS.strategy:
        for jit_text in FLAGS.jit_compile:
            for implementation in FLAGS.encoder_implementation:
                config.encoder_implementation = implementation
                _time_precisions(trainer, config, pairs, tokenizers, strategy_name, jit_text, runs)
    report = json.dumps({
        "recipe": config.recipe, "preset": config.model, "batch_size": config.batch_size, "steps": FLAGS.steps,
        "warmup_steps": FLAGS.warmup_steps, "train_pairs": len(pairs),
        "devices": sorted({d.device_type for d in tf.config.list_logical_devices()}),
        "cpu_count": os.cpu_count(), "load_average": os.getloadavg(), "machine": machine.describe(), "runs": runs,
    }, indent=1)
    print(report)
    if FLAGS.output:
        with open(FLAGS.output, "w", encoding="utf-8") as f:
            f.write(report + "\n")


def _time_precisions(trainer, config, pairs, tokenizers, strategy_name, jit_text, runs):
    """Times each --precision under one strategy, XLA setting and encoder implementation; appends to `runs`."""
    from zoo.training import distribute

    strategy = distribute.resolve_strategy(strategy_name)
    jit_compile = distribute.resolve_jit_compile(jit_text, strategy, config.encoder_implementation)
    static = distribute.resolve_static_shapes(FLAGS.static_shapes, jit_compile, strategy)
    spec, batches, tokens, lengths, shapes = _batches(trainer, config, pairs, tokenizers, static)
    for precision in FLAGS.precision:
        config.precision = precision
        run = _time(trainer, strategy, config, tokenizers, spec, batches, lengths, jit_compile)
        speed = tokens / run["seconds"]
        model_flops = speed * run["model_flops_per_token"]
        runs.append(dict(run, strategy=distribute.strategy_name(strategy), jit_compile=jit_compile,
                         encoder_implementation=config.encoder_implementation,
                         static_shapes=static, distinct_batch_shapes_per_epoch=shapes,
                         steps_per_second=FLAGS.steps / run["seconds"],
                         train_tokens_per_second=speed, tokens_per_step=tokens / FLAGS.steps,
                         peak_fraction=model_flops / (run["matmul_peak_gflops"] * 1e9)))
        if "profile" in run:
            runs[-1]["profile"]["peak_fraction_if_only_products_ran"] = _products_bound(runs[-1])
        print(json.dumps(runs[-1]), file=sys.stderr, flush=True)


def _products_bound(run):
    """The peak fraction of a step that would only run its products, as fast as they ran in the profile, on all
    cores at once: its model FLOPs over the peak's FLOP/s times the products' core-seconds a step / cores."""
    profile = run["profile"]
    seconds = sum(profile["product_ms_per_step"].values()) / 1000 / profile["cores"]
    flops = run["model_flops_per_token"] * run["tokens_per_step"]
    # 4 significant digits, not decimals: a tiny model's bound (0.03) keeps its relative precision
    return float(f"{flops / (run['matmul_peak_gflops'] * 1e9 * seconds):.4g}") if seconds else None


if __name__ == "__main__":
    app.run(main)
