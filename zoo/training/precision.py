"""The compute dtype policy a recipe asks for: float32, mixed_bfloat16, or auto."""

import os

PRECISIONS = ("auto", "float32", "mixed_bfloat16", "mixed_float16")


def cpu_has_bfloat16_matmul(cpuinfo="/proc/cpuinfo"):
    """True when the CPU multiplies bfloat16 natively (AVX512-BF16 or AMX), as oneDNN uses."""
    if not os.path.exists(cpuinfo):
        return False
    with open(cpuinfo, encoding="utf-8", errors="replace") as lines:
        for line in lines:
            if line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
                return bool(flags & {"avx512_bf16", "amx_bf16"})
    return False


def resolve_precision(precision):
    """`auto` -> `mixed_bfloat16` on a GPU or a CPU with native bfloat16 matmuls, else `float32`.

    Weights stay float32 under the mixed policies; on a CPU without native bfloat16 the
    mixed policy would be emulated and slower, hence float32 there.
    """
    if precision not in PRECISIONS:
        raise ValueError(f"unknown precision {precision!r}; expected one of {list(PRECISIONS)}")
    if precision != "auto":
        return precision
    import tensorflow as tf

    if tf.config.list_physical_devices("GPU") or cpu_has_bfloat16_matmul():
        return "mixed_bfloat16"
    return "float32"
