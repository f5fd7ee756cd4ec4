"""Time per decoding step of every attention variant, with and without precomputed keys.

A decoding step scores one query per sentence, `(B, D)`, against the encoder outputs
`(B, Tv, D)`. Without keys the layer re-projects all Tv values at every step; with
`keys = layer.precompute(value)` (once per sentence) it only projects the query.
Each step is a compiled function (`tf.function` on TensorFlow, `jax.jit` on JAX)
called `--repeats` times (interleaved); the JSON reports the median.

    python3 benchmarks/attention.py [--batch 64 --source_length 50 --dim 512 --repeats 200]
    KERAS_BACKEND=jax python3 benchmarks/attention.py

Prints one JSON object on stdout.
"""

import argparse
import json
import os
import statistics
import time

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from zoo import machine  # noqa: E402  (standard library only: a bad flag costs no Keras import)


def compile_steps(layer, jit_compile):
    """Returns compiled `step(query, value, mask)`, `step_with_keys(query, value, mask, keys)`
    and `precompute(value)`, each returning `(context, weights)` or keys, synchronously."""
    import keras

    backend = keras.backend.backend()
    if backend == "tensorflow":
        import tensorflow as tf

        step = tf.function(lambda q, v, m: layer(q, v, mask=m), jit_compile=jit_compile)
        step_with_keys = tf.function(
            lambda q, v, m, k: layer(q, v, mask=m, keys=k), jit_compile=jit_compile
        )
        precompute = tf.function(layer.precompute, jit_compile=jit_compile)
        convert = tf.convert_to_tensor
        return step, step_with_keys, precompute, convert, lambda outputs: outputs
    if backend == "jax":
        import jax

        trainable = [v.value for v in layer.trainable_variables]
        non_trainable = [v.value for v in layer.non_trainable_variables]

        def call(q, v, m, k=None):
            outputs, _ = layer.stateless_call(trainable, non_trainable, q, v, mask=m, keys=k)
            return outputs

        def precompute(v):
            with keras.StatelessScope(state_mapping=list(zip(layer.trainable_variables, trainable))):
                return layer.precompute(v)

        sync = jax.block_until_ready
        return jax.jit(call), jax.jit(call), jax.jit(precompute), jax.numpy.asarray, sync
    raise SystemExit(f"benchmarks/attention.py: backend {backend!r} is not supported (tensorflow, jax)")


def compute_device():
    """Where the backend runs the steps: the first device's kind (a GPU's name, or cpu)."""
    import keras

    if keras.backend.backend() == "jax":
        import jax

        device = jax.devices()[0]
        return {"platform": device.platform, "kind": getattr(device, "device_kind", str(device))}
    import tensorflow as tf

    gpus = tf.config.list_physical_devices("GPU")
    if not gpus:
        return {"platform": "cpu", "kind": "cpu"}
    details = tf.config.experimental.get_device_details(gpus[0])
    return {"platform": "gpu", "kind": details.get("device_name", gpus[0].name)}


def median_ms(calls, sync, repeats, warmup):
    """Median milliseconds of each `(fn, args)` in `calls`, timed in interleaved rounds so
    that a change of machine load mid-run affects all of them alike."""
    for _ in range(warmup):
        for fn, args in calls:
            sync(fn(*args))
    times = [[] for _ in calls]
    for _ in range(repeats):
        for (fn, args), spent in zip(calls, times):
            start = time.perf_counter()
            sync(fn(*args))
            spent.append(time.perf_counter() - start)
    return [1000.0 * statistics.median(spent) for spent in times]


def _at_least(least):
    """An argparse type: an integer >= `least`."""
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < least:
            raise argparse.ArgumentTypeError(f"expected an integer >= {least}, got {text!r}")
        return value

    return parse


def parse_args():
    """The flags, checked before Keras loads: a bad one costs a fraction of a second."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batch", type=_at_least(1), default=64, help="B, sentences decoded together")
    parser.add_argument("--source_length", type=_at_least(1), default=50, help="Tv, source positions")
    parser.add_argument("--dim", type=_at_least(1), default=512, help="D, query and value size")
    parser.add_argument("--units", type=_at_least(1), default=512, help="hidden size of concat / additive")
    parser.add_argument("--rank", type=_at_least(1), default=64, help="rank of reduced-rank attention")
    parser.add_argument("--repeats", type=_at_least(1), default=200, help="timed steps per measurement")
    parser.add_argument("--warmup", type=_at_least(0), default=20, help="untimed steps (tracing, caches)")
    parser.add_argument("--jit_compile", action="store_true", help="XLA-compile the TF steps")
    parser.add_argument(
        "--dtype_policy", choices=("float32", "mixed_float16", "mixed_bfloat16"), default="float32",
        help="Keras dtype policy of the layers (inputs stay float32; the layers cast them)",
    )
    return parser.parse_args()


def main():
    args = parse_args()
    import keras
    import numpy as np

    import zoo.layers

    keras.config.set_dtype_policy(args.dtype_policy)

    rng = np.random.default_rng(0)
    query = rng.normal(size=(args.batch, args.dim)).astype("float32")  # (B, D): one step
    value = rng.normal(size=(args.batch, args.source_length, args.dim)).astype("float32")
    lengths = rng.integers(args.source_length // 2, args.source_length + 1, size=args.batch)
    mask = np.arange(args.source_length)[None, :] < lengths[:, None]  # (B, Tv)

    results = {}
    for name in zoo.layers.names():
        layer = zoo.layers.get(name, {"units": args.units, "rank": args.rank})
        layer(query, value, mask=mask)  # builds the weights
        step, step_with_keys, precompute, convert, sync = compile_steps(layer, args.jit_compile)
        q, v, m = convert(query), convert(value), convert(mask)
        keys = sync(precompute(v))
        plain_context = keras.ops.convert_to_numpy(step(q, v, m)[0])
        keys_context = keras.ops.convert_to_numpy(step_with_keys(q, v, m, keys)[0])
        max_difference = float(np.max(np.abs(plain_context - keys_context)))
        without_keys, with_keys, precompute_ms = median_ms(
            [(step, (q, v, m)), (step_with_keys, (q, v, m, keys)), (precompute, (v,))],
            sync, args.repeats, args.warmup,
        )
        results[name] = {
            "ms_per_step_without_keys": round(without_keys, 4),
            "ms_per_step_with_keys": round(with_keys, 4),
            "speedup": round(without_keys / with_keys, 3),
            "ms_precompute_once_per_sentence": round(precompute_ms, 4),
            "key_dim": int(keys.shape[-1]),
            "max_abs_difference_of_contexts": max_difference,
        }

    report = {
        "benchmark": "attention decoding step",
        "backend": keras.backend.backend(),
        "keras_version": keras.__version__,
        "compiled_with": "jax.jit" if keras.backend.backend() == "jax" else (
            "tf.function(jit_compile=True)" if args.jit_compile else "tf.function"
        ),
        "machine": machine.describe(),
        "device": compute_device(),
        "dtype_policy": args.dtype_policy,
        "shapes": {
            "batch": args.batch, "source_length": args.source_length, "dim": args.dim,
            "units": args.units, "rank": args.rank, "query": [args.batch, args.dim],
        },
        "repeats": args.repeats,
        "statistic": "median",
        "variants": results,
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
