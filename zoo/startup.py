"""Where a command's start-up time goes, and TensorFlow imported without what an export does not need.

`--profile_startup` of `zoo-translate`, `zoo-eval` and `zoo-serve` calls `enable()` first thing
in `main`; the code on the way then ends each phase with `mark(key, description)` (a no-op
unless enabled), and `report(command)` prints to stderr one line per phase, then one line
holding a JSON object with the same phases (what `benchmarks/startup.py` parses):

    zoo-translate: startup:  0.071 s  python: interpreter start to the command's module (site, ...)
    ...
    {"command": "zoo-translate", "phases": {"python": 0.071, ...}, "total_seconds": 2.9, ...}

The first phase starts when the process did: Linux's `/proc/self/stat` and `/proc/uptime`
(to 1/100 s); elsewhere the profile starts at the first import of this module and says so.

`import_tensorflow()` imports TensorFlow without the packages it looks up at its own import
only if they are installed (`TENSORFLOW_OPTIONAL_IMPORTS`): Keras (about a third of its
import time, with matplotlib and IPython behind it), JAX (for TFLite's JAX converter) and SciPy
(`scipy.sparse`, for the legacy `tf.compat.v1` Keras's sparse inputs: 0.1 s of 1.8 on this
project's 2-core machine).

`exit_without_teardown()` ends a one-shot command (`zoo-translate`, `zoo-eval`) as soon as its
output is flushed, without the interpreter's teardown of TensorFlow's modules (about 0.5 s).

Standard library only, so that the commands import it before anything else.
"""

import contextlib
import functools
import importlib
import json
import logging
import os
import sys
import time

_IMPORTED_AT = time.perf_counter()

# TensorFlow imports these in `try: import ... except ImportError`; an export needs none of them.
TENSORFLOW_OPTIONAL_IMPORTS = ("keras", "jax", "scipy")
# Packages the profile reports as imported or not: those a command on an export should not need.
WATCHED_MODULES = ("tensorflow", "tensorflow_text", "keras", "jax", "matplotlib", "IPython", "tensorflow_serving",
                   "sacrebleu", "uvicorn", "httpx", "scipy")
FLAG_HELP = ("Print to stderr where the time from the process start went, one line per phase, then the same "
             "phases as one JSON line.")


def process_age():
    """Seconds since this process started (Linux's /proc, to 1/100 s), or None where that is not known."""
    try:
        with open("/proc/self/stat", encoding="ascii") as f:
            fields = f.read().rsplit(")", 1)[1].split()  # after the command name, which may hold spaces
        with open("/proc/uptime", encoding="ascii") as f:
            uptime = float(f.read().split()[0])
        age = uptime - int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22, `starttime`, in clock ticks
    except (OSError, ValueError, IndexError, AttributeError):
        return None
    return age if 0 <= age < 3600 else None  # e.g. a container whose /proc/uptime is not the kernel's


class StartupProfile:
    """The phases of one start-up, each ended by `mark`; the first starts with the process."""

    def __init__(self, imported_at=_IMPORTED_AT, age=None):
        age = process_age() if age is None else age
        self.process_start = "process start (/proc)" if age is not None else "first import of zoo.startup"
        self.origin = imported_at - (age or 0.0)
        self.phases = {}  # key -> [description, seconds], in the order they ended
        self._last = self.origin
        if age is not None:
            self.mark("python", "interpreter start to the command's module (site, the recipes package)",
                      now=imported_at)

    def mark(self, key, description, now=None):
        """Ends phase `key` now (a key marked again adds up)."""
        now = time.perf_counter() if now is None else now
        self.phases.setdefault(key, [description, 0.0])[1] += now - self._last
        self._last = now

    def as_dict(self, command):
        """The JSON object of `report`: the phases in seconds, their total, the watched modules imported."""
        return {
            "command": command,
            "phases": {key: round(seconds, 4) for key, (_, seconds) in self.phases.items()},
            "total_seconds": round(self._last - self.origin, 4),
            "since": self.process_start,
            "imported": {name: name in sys.modules and sys.modules[name] is not None for name in WATCHED_MODULES},
            "modules": len(sys.modules),
        }

    def lines(self, command):
        """One line per phase, then the total, then the JSON object."""
        out = [f"{command}: startup: {seconds:6.3f} s  {key}: {description}"
               for key, (description, seconds) in self.phases.items()]
        out.append(f"{command}: startup: {self._last - self.origin:6.3f} s  total, from the {self.process_start}")
        return out + [json.dumps(self.as_dict(command))]


PROFILE = None  # this process's StartupProfile once `enable` is called


def enable():
    """Starts profiling (`--profile_startup`): the phases so far are the interpreter's and the command line's."""
    global PROFILE
    PROFILE = StartupProfile()
    PROFILE.mark("command_line", "the command's module, absl and the flags, and the parsing of the command line")


def mark(key, description):
    """Ends phase `key` of the profile, if one is being taken."""
    if PROFILE is not None:
        PROFILE.mark(key, description)


def mark_first_call(function, key, description):
    """`function`, ending phase `key` when its first call returns (`function` itself when not profiling)."""
    if PROFILE is None:
        return function
    pending = [True]

    @functools.wraps(function)  # also copies its attributes (`translate.module`)
    def first_call_marked(*args, **kwargs):
        result = function(*args, **kwargs)
        if pending:
            pending.clear()
            mark(key, description)
        return result

    return first_call_marked


def report(command, last_key=None, last_description=None, stream=None):
    """Ends phase `last_key` (if given), then prints the profile to `stream` (stderr), if one is being taken."""
    if PROFILE is None:
        return
    if last_key:
        PROFILE.mark(last_key, last_description)
    stream = stream or sys.stderr
    stream.write("".join(line + "\n" for line in PROFILE.lines(command)))
    stream.flush()


def import_tensorflow(need_keras=False):
    """`import tensorflow` (phase `import_tensorflow`), without `TENSORFLOW_OPTIONAL_IMPORTS` unless `need_keras`.

    A module set to None in `sys.modules` is one that cannot be imported, which TensorFlow takes for
    a package that is not installed; the entries are removed again, so a later `import keras` works.
    """
    if "tensorflow" in sys.modules:
        return sys.modules["tensorflow"]
    blocked = [] if need_keras else [name for name in TENSORFLOW_OPTIONAL_IMPORTS if name not in sys.modules]
    for name in blocked:
        sys.modules[name] = None
    try:
        tf = importlib.import_module("tensorflow")
    finally:
        for name in blocked:
            if sys.modules.get(name, "") is None:
                del sys.modules[name]
    left_out = f"{', '.join(blocked[:-1])} and {blocked[-1]}" if len(blocked) > 1 else "".join(blocked)
    mark("import_tensorflow", "import tensorflow" + (f" (without {left_out})" if blocked else ""))
    return tf


@contextlib.contextmanager
def exit_without_teardown():
    """Ends the process when the block ends, with its exit status, once stdout, stderr and logging are flushed.

    `os._exit` skips the interpreter's teardown: the garbage collection and finalization of the
    thousands of modules TensorFlow imported, about 0.5 s after the last line is written, which a
    one-shot command does not need (it has no atexit work of its own). An exception other than
    `SystemExit` goes on as usual (traceback, teardown).
    """
    code = 0
    try:
        yield
    except SystemExit as exit_:
        code = exit_.code
    if code is None:
        code = 0
    elif not isinstance(code, int):  # sys.exit("message"): printed, status 1, as Python does
        sys.stderr.write(f"{code}\n")
        code = 1
    for stream in (sys.stdout, sys.stderr):
        if stream is None:  # the command was started with that stream closed (`>&-`)
            continue
        try:
            stream.flush()
        except (OSError, ValueError):  # a reader that went away (`| head`), a closed stream
            pass
    logging.shutdown()
    os._exit(code)
