"""The machine a run is on, as the benchmarks record it beside their figures (standard library only).

Speed figures mean little without the processor behind them: the same 2 cores train the
reference model at 2k tokens/s on an AVX2-only CPU and at 11k on one with native bfloat16
matrix units. `describe()` names the CPU, its matrix-related instruction sets and the load,
so that the benchmarks' JSON and a run's `results.json` say which kind of machine gave them.

On a virtual machine the hypervisor may also run other guests on the same cores: the time it
takes from this one is "steal" in `/proc/stat`. `cpu_ticks()` reads that file and
`cpu_shares(before, after)` splits the time between two readings into busy, idle and stolen, so a
benchmark can say how much of its timed window the machine really had (a quarter stolen makes
every figure of that window a quarter slower, whatever the code).
"""

import os
import platform

CPUINFO = "/proc/cpuinfo"
PROC_STAT = "/proc/stat"

# The states of /proc/stat's "cpu" line, in its order (clock ticks summed over the cores).
CPU_STATES = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")
_BUSY = ("user", "nice", "system", "irq", "softirq")

# The instruction sets behind the CPU's matrix products (oneDNN picks its kernels by them):
# AVX2/FMA (8 float32 lanes), AVX-512 (16), AVX512-BF16 and AMX (native bfloat16 products).
MATRIX_FEATURES = ("fma", "avx2", "avx512f", "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16")


def _first_processor(cpuinfo):
    """The `name : value` lines of `cpuinfo`'s first processor as a dict; empty where the file is missing."""
    fields = {}
    if os.path.exists(cpuinfo):
        with open(cpuinfo, encoding="utf-8", errors="replace") as lines:
            for line in lines:
                if not line.strip() and fields:
                    break
                key, _, value = line.partition(":")
                fields.setdefault(key.strip(), value.strip())
    return fields


def cpu_flags(cpuinfo=CPUINFO):
    """The CPU's feature flags (e.g. {'avx2', 'amx_bf16', ...}); empty where /proc/cpuinfo is missing."""
    return set(_first_processor(cpuinfo).get("flags", "").split())


def usable_cpus():
    """The cores this process may run on: its affinity mask where the OS has one, else all of them."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def describe(cpuinfo=CPUINFO):
    """The machine as a JSON-ready dict: CPU model, cores, its matrix features, the load averages now.

    `cpu_family` is the x86 "family/model" numbers, for when the model name alone says too little
    (a virtual machine may show any AMD EPYC as "AMD EPYC": Zen 4 is family 25, Zen 5 family 26);
    None where /proc/cpuinfo has no such lines.
    """
    fields = _first_processor(cpuinfo)
    flags = set(fields.get("flags", "").split())
    family, model = fields.get("cpu family"), fields.get("model")
    return {
        "cpu_model": fields.get("model name") or platform.processor() or platform.machine(),
        "cpu_family": f"{family}/{model}" if family and model else None,
        "cpu_count": os.cpu_count(),
        "cpus_usable": usable_cpus(),
        "matrix_features": [feature for feature in MATRIX_FEATURES if feature in flags],
        "load_average": [round(load, 2) for load in os.getloadavg()],
        "cpu_shares_since_boot": cpu_shares({state: 0 for state in CPU_STATES}, cpu_ticks()),
        "platform": platform.platform(),
    }


def cpu_ticks(stat=PROC_STAT):
    """The machine's CPU time so far by state (`CPU_STATES`, clock ticks over all cores) from `stat`'s
    "cpu" line; None where the file is missing or holds no such line (not Linux)."""
    try:
        with open(stat, encoding="ascii", errors="replace") as lines:
            for line in lines:
                fields = line.split()
                if fields and fields[0] == "cpu":
                    numbers = [int(value) for value in fields[1 : len(CPU_STATES) + 1]]
                    return dict(zip(CPU_STATES, numbers + [0] * (len(CPU_STATES) - len(numbers))))
    except (OSError, ValueError):
        pass
    return None


def cpu_shares(before, after):
    """How the machine's CPU time between two `cpu_ticks()` readings went, as fractions of it (3 decimals):
    `busy` (user, nice, system and interrupt time), `idle` (idle and waiting for I/O) and `steal` (the
    hypervisor ran another guest while this one's CPUs wanted to run); and `steal_of_demand`, the stolen
    part of the time the CPUs wanted (busy + steal): what a run that keeps every core busy lost. None
    without both readings or where no tick passed between them."""
    if not before or not after:
        return None
    spent = {state: after[state] - before[state] for state in CPU_STATES}
    total = sum(spent.values())
    if total <= 0:
        return None
    busy = sum(spent[state] for state in _BUSY)
    demand = busy + spent["steal"]
    return {"busy": round(busy / total, 3),
            "idle": round((spent["idle"] + spent["iowait"]) / total, 3),
            "steal": round(spent["steal"] / total, 3),
            "steal_of_demand": round(spent["steal"] / demand, 3) if demand else 0.0}
