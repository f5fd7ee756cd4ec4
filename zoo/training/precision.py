"""The compute dtype policy a recipe asks for: float32, mixed_bfloat16, mixed_float16, or auto."""

from zoo.machine import CPUINFO, cpu_flags

PRECISIONS = ("auto", "float32", "mixed_bfloat16", "mixed_float16")

# NVIDIA GPUs multiply bfloat16 natively from compute capability 8.0 (Ampere) on; the
# T4 (7.5) and V100 (7.0) want float16 with loss scaling instead.
_BFLOAT16_GPU_CAPABILITY = (8, 0)


def cpu_has_bfloat16_matmul(cpuinfo=CPUINFO):
    """True when the CPU multiplies bfloat16 natively (AVX512-BF16 or AMX), as oneDNN uses."""
    return bool(cpu_flags(cpuinfo) & {"avx512_bf16", "amx_bf16"})


def choose_precision(tpu=False, gpu_capabilities=(), cpu_bfloat16=False):
    """The `auto` policy for some hardware, without looking at the machine.

    Args:
      tpu: a TPU trains (bfloat16 is its native matmul type).
      gpu_capabilities: the `(major, minor)` CUDA compute capability of each GPU used.
      cpu_bfloat16: the CPU multiplies bfloat16 natively (used when there is no accelerator).

    Returns:
      `"mixed_bfloat16"` on TPUs, on GPUs that are all Ampere or newer and on CPUs with
      native bfloat16; `"mixed_float16"` (Keras adds loss scaling) when any GPU is older;
      `"float32"` on other CPUs, where a mixed policy would be emulated and slower.
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

    return choose_precision(tpu=bool(tf.config.list_logical_devices("TPU")),
                            gpu_capabilities=gpu_capabilities(), cpu_bfloat16=cpu_has_bfloat16_matmul())
