"""The compute dtype policy a recipe asks for: float32, mixed_bfloat16, mixed_float16, or auto."""

import functools
import time

from absl import logging

from zoo.constants import PRECISIONS
from zoo.machine import CPUINFO, cpu_flags


# NVIDIA GPUs multiply bfloat16 natively from compute capability 8.0 (Ampere) on; the
# T4 (7.5) and V100 (7.0) want float16 with loss scaling instead.
_BFLOAT16_GPU_CAPABILITY = (8, 0)

# On a CPU, a mixed policy adds casts and rounding, so bfloat16 matrix products must be at
# least this much faster than float32's for `auto` to pick it. AVX512-BF16 alone does not
# promise it: measured on 2 cores, an AMD EPYC's bfloat16 products ran 2x float32's, an
# Intel Xeon's with AVX512-BF16 and AVX512-FP16 but no AMX ran at 0.53x (docs/scaling.md).
BFLOAT16_MIN_SPEEDUP = 1.25


def cpu_has_bfloat16_matmul(cpuinfo=CPUINFO):
    """True when the CPU multiplies bfloat16 natively (AVX512-BF16 or AMX), as oneDNN uses."""
    return bool(cpu_flags(cpuinfo) & {"avx512_bf16", "amx_bf16"})


@functools.lru_cache(maxsize=None)
def cpu_bfloat16_speedup(size=1024, repeats=5):
    """bfloat16 over float32 matmul throughput on this CPU: `size`-square products, timed.

    Each dtype's product runs once untimed (oneDNN picks and builds its kernel), then
    `repeats` times interleaved with the other dtype's, so both see the same load; the
    fastest of each counts. About 0.1-0.5 s on 2 cores; measured once per process.
    """
    import tensorflow as tf

    with tf.device("/CPU:0"):
        operands = {dtype: tf.cast(tf.random.stateless_normal((size, size), seed=(1, 2)), dtype)
                    for dtype in (tf.float32, tf.bfloat16)}
        best = {}
        for attempt in range(repeats + 1):
            for dtype, x in operands.items():
                start = time.perf_counter()
                tf.linalg.matmul(x, x).numpy()
                if attempt:  # the first is the kernel's creation
                    best[dtype] = min(best.get(dtype, float("inf")), time.perf_counter() - start)
    return best[tf.float32] / best[tf.bfloat16]


def cpu_bfloat16_pays(cpuinfo=CPUINFO, speedup=cpu_bfloat16_speedup):
    """True when the CPU multiplies bfloat16 natively and `speedup()` >= BFLOAT16_MIN_SPEEDUP."""
    if not cpu_has_bfloat16_matmul(cpuinfo):
        return False  # emulated: a mixed policy only adds casts
    measured = speedup()
    pays = measured >= BFLOAT16_MIN_SPEEDUP
    logging.info("precision=auto: this CPU's bfloat16 matmuls ran %.2fx float32's (mixed_bfloat16 needs >= %.2fx): %s",
                 measured, BFLOAT16_MIN_SPEEDUP, "mixed_bfloat16" if pays else "float32")
    return pays


def describe_auto(precision):
    """" (auto: this CPU's bfloat16 matmuls ran 0.66x float32's)" once `auto` measured them, else ""."""
    if precision != "auto" or not cpu_bfloat16_speedup.cache_info().currsize:
        return ""
    return f" (auto: this CPU's bfloat16 matmuls ran {cpu_bfloat16_speedup():.2f}x float32's)"


def choose_precision(tpu=False, gpu_capabilities=(), cpu_bfloat16=False):
    """The `auto` policy for some hardware, without looking at the machine.

    Args:
      tpu: a TPU trains (bfloat16 is its native matmul type).
      gpu_capabilities: the `(major, minor)` CUDA compute capability of each GPU used.
      cpu_bfloat16: the CPU's bfloat16 products pay (used when there is no accelerator).

    Returns:
      `"mixed_bfloat16"` on TPUs, on GPUs that are all Ampere or newer and on CPUs whose
      bfloat16 products pay; `"mixed_float16"` (Keras adds loss scaling) when any GPU is older;
      `"float32"` on other CPUs, where a mixed policy would be emulated or slower.
    """
    if tpu:
        return "mixed_bfloat16"
    if gpu_capabilities:
        if all(tuple(c) >= _BFLOAT16_GPU_CAPABILITY for c in gpu_capabilities):
            return "mixed_bfloat16"
        return "mixed_float16"
    return "mixed_bfloat16" if cpu_bfloat16 else "float32"


def gpu_capabilities():
    """`(major, minor)` compute capability of each visible GPU; `(0, 0)` where TF does not say."""
    import tensorflow as tf

    return [
        tuple(tf.config.experimental.get_device_details(gpu).get("compute_capability", (0, 0)))
        for gpu in tf.config.list_physical_devices("GPU")
    ]


def resolve_precision(precision):
    """The Keras dtype policy name of a precision field value; `auto` reads the hardware.

    Weights stay float32 under the mixed policies. Call it after the strategy is resolved:
    a TPU's devices are listed only once its system is initialized.
    """
    if precision not in PRECISIONS:
        raise ValueError(f"unknown precision {precision!r}; expected one of {list(PRECISIONS)}")
    if precision != "auto":
        return precision
    import tensorflow as tf

    tpu = bool(tf.config.list_logical_devices("TPU"))
    gpus = gpu_capabilities()
    cpu_bfloat16 = not tpu and not gpus and cpu_bfloat16_pays()  # measured only where the CPU trains
    return choose_precision(tpu=tpu, gpu_capabilities=gpus, cpu_bfloat16=cpu_bfloat16)
