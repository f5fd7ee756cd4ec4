"""Start-up of `zoo-translate` on an export, against a bare `python -c "import tensorflow"`.

    python benchmarks/startup.py --model EXPORT                    # 5 runs of each, JSON on stdout
    python benchmarks/startup.py --model EXPORT --runs 9 --output benchmarks/results/startup.json
    python benchmarks/startup.py --model EXPORT --zoo_translate zoo-translate   # the installed command

`EXPORT` is what `zoo-translate --model` takes (a SavedModel version, a model base path, a
workdir with an export). Each run is a fresh process, and the two commands alternate so that
both see the same machine load: `python -c "import tensorflow"` (which prints a line once the
import is done), then `echo x | zoo-translate --model EXPORT --profile_startup` (by default this
checkout's `python -m recipes.translate`, which is what the console script runs). For each the
wall time from spawn to exit is measured, and to its first output line. `--warmup`
runs of each come first and are not counted (the files then sit in the page cache).

The JSON holds the median and every run of each command, `ratio` (median zoo-translate over
median bare import, spawn to exit: the goal is <= 1.15 and a median <= 5 s),
`ratio_first_line_to_import` (zoo-translate's first line against the bare import's end: the
same comparison without the exits, since the bare import's exit tears TensorFlow's modules
down, seconds on a slow machine, and zoo-translate's does not), the median of each phase of
`--profile_startup` (`zoo.startup`: interpreter, command line, import tensorflow, op libraries,
tf.saved_model.load, first translation, ...), the modules zoo-translate imported, and the
machine (`zoo.machine.describe()`: CPU model and features, the load average after the runs)
with the load average before them. Timings depend on the machine and its load: compare
runs of one machine only.
"""

import importlib.metadata
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

from absl import app, flags

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO_ROOT)

from zoo import machine  # noqa: E402  (standard library only: cheap)

FLAGS = flags.FLAGS
flags.DEFINE_string("model", None, "The export `zoo-translate --model` takes.")
flags.DEFINE_integer("runs", 5, "Counted runs of each command.", lower_bound=1)
flags.DEFINE_integer("warmup", 1, "Runs of each command before the counted ones.", lower_bound=0)
flags.DEFINE_string("input", "x", "The line piped into zoo-translate.")
flags.DEFINE_string("zoo_translate", None, "The zoo-translate command (split like a shell); default: this "
                    "checkout's `python -m recipes.translate`.")
flags.DEFINE_string("output", None, "Also write the JSON to this file.")
flags.mark_flag_as_required("model")

GOAL_SECONDS, GOAL_RATIO = 5.0, 1.15


BARE_IMPORT = "import tensorflow; print('imported', flush=True)"


def run_bare_import():
    """`{seconds, import_seconds}` of `python -c "import tensorflow"`: from spawn to exit, and to the line it
    prints once the import is done (the exit adds the interpreter's teardown of TensorFlow's modules, which
    zoo-translate skips: `zoo.startup.exit_without_teardown`)."""
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-c", BARE_IMPORT], cwd=REPO_ROOT, stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)  # fmt: skip
    process.stdout.readline()
    import_seconds = time.perf_counter() - started
    process.stdout.read()
    if process.wait():
        raise RuntimeError(f"{sys.executable} -c {BARE_IMPORT!r} exited with {process.returncode}")
    return {"seconds": time.perf_counter() - started, "import_seconds": import_seconds}


def run_translate(command, model, line):
    """`{seconds, first_line_seconds, output, profile}` of one `echo line | zoo-translate ... --profile_startup`."""
    with tempfile.TemporaryFile() as stderr:  # a file: a full stderr pipe would stall the process
        started = time.perf_counter()
        process = subprocess.Popen(command + [f"--model={model}", "--profile_startup"], cwd=REPO_ROOT,
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr)  # fmt: skip
        process.stdin.write(line.encode("utf-8") + b"\n")
        process.stdin.close()
        first = process.stdout.readline()
        first_line_seconds = time.perf_counter() - started
        rest = process.stdout.read()
        process.wait()
        seconds = time.perf_counter() - started
        stderr.seek(0)
        errors = stderr.read().decode("utf-8", "replace")
    if process.returncode != 0:
        raise RuntimeError(f"{shlex.join(command)} exited with {process.returncode}:\n{errors[-3000:]}")
    profile = json.loads(errors.rstrip("\n").rsplit("\n", 1)[-1])
    return {"seconds": seconds, "first_line_seconds": first_line_seconds,
            "output": (first + rest).decode("utf-8", "replace").rstrip("\n"), "profile": profile}


def median_phases(profiles):
    """The median of each phase over the runs (a phase missing from a run counts as 0)."""
    keys = list(dict.fromkeys(key for profile in profiles for key in profile["phases"]))
    return {key: round(statistics.median(p["phases"].get(key, 0.0) for p in profiles), 4) for key in keys}


def benchmark(command, model, runs, warmup, line):
    """Alternating runs of both commands; the report of the module docstring."""
    load_before = os.getloadavg()
    for _ in range(warmup):
        run_bare_import()
        run_translate(command, model, line)
    bare, translate, ticks = [], [], machine.cpu_ticks()
    for _ in range(runs):
        bare.append(run_bare_import())
        translate.append(run_translate(command, model, line))
    shares = machine.cpu_shares(ticks, machine.cpu_ticks())
    bare_median = statistics.median(run["seconds"] for run in bare)
    import_median = statistics.median(run["import_seconds"] for run in bare)
    translate_median = statistics.median(run["seconds"] for run in translate)
    first_line_median = statistics.median(run["first_line_seconds"] for run in translate)
    ratio = translate_median / bare_median
    return {
        "benchmark": "startup",
        "model": os.path.abspath(model),
        "commands": {"bare_import": f"{sys.executable} -c {shlex.quote(BARE_IMPORT)}",
                     "zoo_translate": f"echo {shlex.quote(line)} | {shlex.join(command)} --model=MODEL --profile_startup"},
        "runs": runs, "warmup_runs": warmup,
        "bare_import": {"median_seconds": round(bare_median, 4), "seconds": [round(run["seconds"], 4) for run in bare],
                        "median_import_seconds": round(import_median, 4),
                        "import_seconds": [round(run["import_seconds"], 4) for run in bare]},
        "zoo_translate": {
            "median_seconds": round(translate_median, 4),
            "median_first_line_seconds": round(first_line_median, 4),
            "seconds": [round(run["seconds"], 4) for run in translate],
            "first_line_seconds": [round(run["first_line_seconds"], 4) for run in translate],
            "median_phases": median_phases([run["profile"] for run in translate]),
            "median_profile_total_seconds": round(statistics.median(run["profile"]["total_seconds"]
                                                                    for run in translate), 4),
            "imported": translate[-1]["profile"]["imported"],
            "output": translate[-1]["output"],
        },
        "ratio": round(ratio, 4),
        # Without either process's exit: zoo-translate's first line against the bare import's end.
        "ratio_first_line_to_import": round(first_line_median / import_median, 4),
        "goal": {"median_seconds_at_most": GOAL_SECONDS, "ratio_at_most": GOAL_RATIO,
                 "met": translate_median <= GOAL_SECONDS and ratio <= GOAL_RATIO},
        "machine": {**machine.describe(),
                    "load_average_before": [round(x, 2) for x in load_before],  # describe()'s is after
                    "cpu_shares_of_the_timed_runs": shares,  # the time the hypervisor took: zoo.machine.cpu_shares
                    "python": platform.python_version(),
                    # ml_dtypes: its 0.7.0 takes about 0.6 s to import here, 0.6.0 a few ms (setup.py).
                    **{name: importlib.metadata.version(name) for name in ("tensorflow", "numpy", "ml_dtypes")},
                    "platform": platform.platform()},
    }


def main(argv):
    del argv
    if not os.path.isdir(FLAGS.model):  # before the bare imports: a wrong path costs no minute of them
        raise app.UsageError(f"--model={FLAGS.model}: not a directory (an export, a model base path or a workdir)")
    command = shlex.split(FLAGS.zoo_translate) if FLAGS.zoo_translate else [sys.executable, "-m", "recipes.translate"]
    # Absolute: the commands run in the repository root, a relative path is the caller's.
    report = benchmark(command, os.path.abspath(FLAGS.model), FLAGS.runs, FLAGS.warmup, FLAGS.input)
    text = json.dumps(report, indent=2)
    print(text)
    if FLAGS.output:
        os.makedirs(os.path.dirname(os.path.abspath(FLAGS.output)), exist_ok=True)
        with open(FLAGS.output, "w", encoding="utf-8") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    app.run(main)
