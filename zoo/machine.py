"""The machine a run is on, as the benchmarks record it beside their figures (standard library only).

Speed figures mean little without the processor behind them: the same 2 cores train the
reference model at 2k tokens/s on an AVX2-only CPU and at 11k on one with AMX's bfloat16
matrix units. `describe()` names the CPU, its matrix-related instruction sets and the load,
so that every JSON under `benchmarks/results/` says which kind of machine gave it.
"""

import os
import platform

CPUINFO = "/proc/cpuinfo"

# The instruction sets behind the CPU's matrix products (oneDNN picks its kernels by them):
# AVX2/FMA (8 float32 lanes), AVX-512 (16), AVX512-BF16 and AMX (native bfloat16 products).
MATRIX_FEATURES = ("fma", "avx2", "avx512f", "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16")


def _cpuinfo_field(name, cpuinfo):
    """The value of the first `name : value` line of `cpuinfo`, or None (no file, no such line)."""
    if not os.path.exists(cpuinfo):
        return None
    with open(cpuinfo, encoding="utf-8", errors="replace") as lines:
        for line in lines:
            key, _, value = line.partition(":")
            if key.strip() == name:
                return value.strip()
    return None


def cpu_flags(cpuinfo=CPUINFO):
    """The CPU's feature flags (e.g. {'avx2', 'amx_bf16', ...}); empty where /proc/cpuinfo is missing."""
    return set((_cpuinfo_field("flags", cpuinfo) or "").split())


def cpu_model(cpuinfo=CPUINFO):
    """The CPU's model name (e.g. 'AMD EPYC'), or what `platform` knows where /proc/cpuinfo is missing."""
    return _cpuinfo_field("model name", cpuinfo) or platform.processor() or platform.machine()


def describe(cpuinfo=CPUINFO):
    """The machine as a JSON-ready dict: CPU model, cores, its matrix features, the load averages now."""
    flags = cpu_flags(cpuinfo)
    return {
        "cpu_model": cpu_model(cpuinfo),
        "cpu_count": os.cpu_count(),
        "cpus_usable": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "matrix_features": [feature for feature in MATRIX_FEATURES if feature in flags],
        "load_average": [round(load, 2) for load in os.getloadavg()],
        "platform": platform.platform(),
    }
