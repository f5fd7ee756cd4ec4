"""The command-line layer of every zoo command (`zoo-train`, `zoo-eval`, ..., `zoo-serve`).

`run(main, command, doc)` is absl's `app.run` with:

- `--help` (also `-?`, `--helpshort`): the command's summary, its example invocations (the
  lines of `doc` that start with the command's name) and its own flags, one line each;
  `--helpfull`: the same, then every other flag (absl's logging flags, ...). Both exit 0.
- every mistake on the command line (an unknown flag, a value of the wrong type or out of
  range, a missing required flag, an unreadable `--flagfile`, stray arguments) answered by
  one `command: error: ...` line on stderr and exit status 2, never a traceback;
- a `CommandError` raised by `main` answered the same way, with its own exit status;
- Ctrl-C (SIGINT) answered by one `command: interrupted` line (and what the command keeps, from
  `interrupted`) and exit status 130, as a shell reports a process that SIGINT ended, never a traceback;
  SIGTERM (`timeout`, `docker stop`, a batch scheduler) the same way, `command: terminated`, status 143,
  after the same clean-up (a workdir's lock, temporary files);
- `--verbosity` below 0 (absl's "warnings only") silences the progress reports of `zoo.progress`.

absl and the standard library only: importing it costs nothing (no TensorFlow), so that
`--help` and usage errors answer at once.
"""

import difflib
import os
import re
import signal
import sys
import tempfile

from absl import app, flags

from zoo import progress

FLAGS = flags.FLAGS

# Python's own wording when a value does not convert; replaced by the type the flag expects.
_CONVERSION_ERRORS = ("invalid literal", "could not convert", "('Non-boolean argument")
_TYPE_NAMES = {"bool": "true or false", "int": "an integer", "float": "a number", "string": "text"}


class CommandError(Exception):
    """A failure the user can fix; `run` prints it as one `command: error: message` line.

    Args:
      message: what was received and what was expected, on one line.
      status: the exit status (2 for bad usage or input, 1 for a failed run).
    """

    def __init__(self, message, status=2):
        super().__init__(message)
        self.status = status


def fail(command, message, status=2):
    """Prints `command: error: message` (one line) on stderr and exits with `status`."""
    message = " ".join(str(message).split())  # one line, whatever the message held
    print(f"{command}: error: {message}", file=sys.stderr, flush=True)
    sys.exit(status)


def check_standard_streams(*names):
    """Raises `CommandError` if one of the named standard streams ("stdin", "stdout") was closed when
    the command started (`<&-`, `>&-`: Python then sets it to None)."""
    closed = [name for name in names if getattr(sys, name) is None]
    if closed:
        raise CommandError(f"{' and '.join(closed)} closed; expected "
                           + " and ".join({"stdin": "source lines on stdin", "stdout": "a writable stdout"}[name]
                                          for name in closed))


def writable_directory(path, flag):
    """Checks, without creating anything, that `path` is or can become a writable directory.

    Raises:
      CommandError: `path` is a file, lies under a file, or where this user cannot write
        (`flag` names the command-line flag it came from, e.g. "--workdir").

    Returns:
      `path`.
    """
    if not path:
        raise CommandError(f"{flag}: empty path; expected a directory (or a path to create one at)")
    if os.path.exists(path) and not os.path.isdir(path):
        raise CommandError(f"{flag} {path}: is a file; expected a directory (or a path to create one at)")
    existing = os.path.abspath(path)
    while not os.path.exists(existing):  # the directory that would hold the new ones
        existing = os.path.dirname(existing)
    try:
        if not os.path.isdir(existing):
            raise NotADirectoryError(20, "Not a directory", existing)
        with tempfile.TemporaryFile(dir=existing):
            pass
    except OSError as error:
        raise CommandError(f"{flag} {path}: cannot write there ({error.strerror or error}); "
                           "expected a directory this user can write to") from None
    return path


def close_matches(word, candidates, n=3):
    """The `n` candidates closest to `word` (difflib's ratio >= 0.6), best first."""
    return difflib.get_close_matches(word, list(candidates), n=n, cutoff=0.6)


def did_you_mean(matches, prefix=""):
    """`"; did you mean --a or --b?"` for `matches` (with `prefix` before each), or ""."""
    if not matches:
        return ""
    return "; did you mean " + " or ".join(f"{prefix}{match}" for match in matches) + "?"


def expected_type(flag):
    """What a flag's value must be, in words: "a positive integer", "a number", ..."""
    return flag.parser.syntactic_help or _TYPE_NAMES.get(flag.flag_type(), flag.flag_type())


def flag_error_message(error, flag_values=FLAGS):
    """One line for an absl `flags.Error`: the flag, the value received, what was expected."""
    message = str(error)
    if isinstance(error, flags.UnrecognizedFlagError):
        names = [name for name in flag_values if len(name) > 1]
        return f"unknown flag --{error.flagname}" + (
            did_you_mean(close_matches(error.flagname, names), "--") or "; --help lists the flags"
        )
    if isinstance(error, flags.CantOpenFlagFileError):
        return "cannot read --flagfile: " + message.split("Unable to open flagfile:", 1)[-1].strip()
    match = re.match(r"flag --([^=\s]+)=(.*?): (.*)$", message, re.S)
    if match:
        name, value, reason = match.groups()
        flag = flag_values[name] if name in flag_values else None
        if flag is not None and reason.endswith("must have a value other than None."):
            return f"--{name} is required: {flag.help}"
        if flag is not None and reason.startswith(_CONVERSION_ERRORS):
            reason = f"expected {expected_type(flag)}, got {value!r}"
        return f"--{name}={value}: {reason.splitlines()[0]}"
    match = re.match(r"Missing value for flag (\S+)", message)
    if match:
        return f"{match.group(1)} needs a value"
    return message.strip().splitlines()[0] if message.strip() else type(error).__name__


def command_module(main):
    """The module name absl files `main`'s flags under (`sys.argv[0]` for `python -m`)."""
    return sys.argv[0] if main.__module__ == "__main__" else main.__module__


def flag_usage(flag):
    """How the flag is written in `--help`: `--model`, `--[no]progress`, `--config.<field>=VALUE`."""
    return "--" + (getattr(flag, "usage_name", None) or (f"[no]{flag.name}" if flag.boolean else flag.name))


def flag_line(flag, width):
    """`  --name      help (default: x)`: one line, however long the help is."""
    notes = []
    if getattr(flag, "usage_name", None) is None:
        if flag.default is not None:
            notes.append(f"default: {str(flag.default).lower() if flag.boolean else flag.default}")
        elif flag_is_required(flag):
            notes.append("required")
    text = " ".join(flag.help.split()) + (f" ({'; '.join(notes)})" if notes else "")
    return f"  {flag_usage(flag).ljust(width)}  {text}"


def flag_is_required(flag):
    """Whether absl was told the flag needs a value (`mark_flag_as_required`)."""
    return any("must have a value other than None" in getattr(validator, "message", "")
               for validator in flag.validators)


def help_text(command, doc, own_flags, full=False, full_extra=None):
    """The text of `--help` (or `--helpfull`): summary, examples, own flags, then the rest."""
    lines = [line.strip() for line in (doc or "").strip().splitlines()]
    # The docstrings start "`zoo-eval`: scores ...": the command's name is said once, below.
    summary = re.sub(rf"^`?{re.escape(command)}`?:\s*", "", lines[0]) if lines else ""
    examples, previous = [], ""
    for line in (doc or "").splitlines():
        if line.strip().startswith(command + " ") or (previous.endswith("\\") and examples):
            examples.append("  " + " ".join(line.split()))
        previous = line.strip()
    width = max((len(flag_usage(flag)) for flag in own_flags), default=0)
    out = [f"{command}: {summary}", ""]
    if examples:
        out += ["example:" if len(examples) == 1 else "examples:", *examples, ""]
    out += ["flags:", *(flag_line(flag, width) for flag in own_flags), ""]
    if full:
        out += [full_extra(), ""] if full_extra else []
        out += ["all other flags:", FLAGS.get_help(include_special_flags=True)]
    else:
        out.append(f"{command} --helpfull also lists the flags every command shares (logging, --flagfile).")
    return "\n".join(out) + "\n"


class _HelpFlag(flags.BooleanFlag):
    """`--help` / `--helpfull`: prints `help_text` on stdout and exits 0."""

    def __init__(self, name, short_name, full, show):
        super().__init__(name, False, "show the full help" if full else "show this help", short_name=short_name,
                         allow_hide_cpp=True)
        self._full = full
        self._show = show

    def parse(self, argument):
        if self._parse(argument):
            try:
                sys.stdout.write(self._show(self._full))
                sys.stdout.flush()
            except BrokenPipeError:  # `--help | head`: the reader is gone
                pass
            sys.exit(0)


def install_help(command, doc, module, full_extra=None):
    """Replaces absl's help flags by ones that show `command`'s own flags first."""
    app.define_help_flags()  # absl's, so that app.run does not define them again

    def show(full):
        own = FLAGS.get_key_flags_for_module(module)
        return help_text(command, doc, own, full=full, full_extra=full_extra)

    for name, short_name, full in (("help", "?", False), ("helpshort", None, False), ("helpfull", None, True)):
        for old_name in (name, short_name):
            if old_name in FLAGS:
                delattr(FLAGS, old_name)
        flags.DEFINE_flag(_HelpFlag(name, short_name, full, show), module_name="absl.app")


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread: what catches Ctrl-C (clean-up, a server's shutdown) catches it too."""


def _terminate(signum, frame):
    raise Terminated()


def run(main, command, doc, key_flags=(), full_extra=None, argv=None, interrupted=""):
    """absl's `app.run(main)` with the help, errors and quiet rule of this module's docstring.

    Args:
      main: `main(argv)`, called with no positional arguments left (stray ones are an error).
      command: the console script's name, as the user types it (`zoo-eval`).
      doc: text whose first line is the summary and whose lines starting with `command`
        are the example invocations (the module docstring).
      key_flags: names of flags defined elsewhere that `--help` lists as the command's own.
      full_extra: `() -> str` shown by `--helpfull` before the other flags.
      argv: the command line (default `sys.argv`).
      interrupted: what the user is told after `command: interrupted` on Ctrl-C (what was kept).
    """
    module = command_module(main)
    for name in key_flags:
        FLAGS.register_key_flag_for_module(module, FLAGS[name])
    install_help(command, doc, module, full_extra)

    def parse(args):
        try:
            return FLAGS(args)
        except flags.Error as error:
            fail(command, flag_error_message(error))

    def guarded(args):
        if len(args) > 1:
            fail(command, f"unexpected arguments {args[1:]}; expected only --flags (--help lists them)")
        if FLAGS["verbosity"].present and FLAGS.verbosity < 0:
            progress.set_quiet(True)
        if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
            signal.signal(signal.SIGTERM, _terminate)
        try:
            return main(args)
        except CommandError as error:
            fail(command, str(error), error.status)
        except KeyboardInterrupt as stop:
            how, status = ("terminated", 143) if isinstance(stop, Terminated) else ("interrupted", 130)
            print(f"{command}: {how}{'; ' + interrupted if interrupted else ''}", file=sys.stderr, flush=True)
            sys.exit(status)

    app.run(guarded, argv=argv, flags_parser=parse)
