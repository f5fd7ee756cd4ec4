"""The machine's measured matrix-multiply peak, the yardstick of the peak fractions of the benchmarks.

Imported by `benchmarks/train.py` and `benchmarks/decode.py` (run as `python benchmarks/NAME.py`,
which puts this folder on `sys.path`); TensorFlow is imported when a peak is measured.
"""

import math
import os
import time

_PEAKS = {}  # (dtype, device) -> GFLOP/s, measured once per process


def matmul_peak_gflops(dtype, device, size=2048, repeats=5, min_seconds=0.2):
    """The GFLOP/s (`2 size^3` FLOPs a product) of chained `size` x `size` matmuls in `dtype` on `device`.

    One untimed call first (tracing, kernel choice); then the best of `repeats` calls, each
    a `tf.while_loop` of enough products to take about `min_seconds`, ended by reading one
    element back so that the device has finished. The factor is scaled by `1/sqrt(size)` so
    the chained products neither overflow nor vanish in half precision. On a CPU the peak is
    the better of one chain and of one independent chain per core run at once: with
    TensorFlow's intra-op threads limited (`TF_NUM_INTRAOP_THREADS=1`) one product uses one
    core, and the peak is still the machine's.
    """
    if (dtype, device) not in _PEAKS:
        chains = [1] if "CPU" not in device.upper() else sorted({1, os.cpu_count() or 1})
        _PEAKS[dtype, device] = max(_chained_gflops(dtype, device, n, size, repeats, min_seconds) for n in chains)
    return _PEAKS[dtype, device]


def _chained_gflops(dtype, device, chains, size, repeats, min_seconds):
    """GFLOP/s of `chains` independent chains of products, in one loop whose steps multiply each once."""
    import tensorflow as tf

    with tf.device(device):
        xs = [tf.cast(tf.random.stateless_normal((size, size), seed=(0, 2 + i)), dtype) for i in range(chains)]
        factor = tf.cast(tf.random.stateless_normal((size, size), seed=(0, 1)) / math.sqrt(size), dtype)

        @tf.function
        def chain(xs, count):
            def body(i, xs):
                return i + 1, [tf.linalg.matmul(x, factor) for x in xs]

            return tf.while_loop(lambda i, xs: i < count, body, (0, xs))[1]

        def seconds(count):
            started = time.perf_counter()
            for x in chain(xs, tf.constant(count)):
                float(x[0, 0])
            return time.perf_counter() - started

        seconds(1)
        count = max(1, math.ceil(min_seconds / seconds(1)))
        best = min(seconds(count) for _ in range(repeats))
    return 2 * size**3 * count * chains / best / 1e9
