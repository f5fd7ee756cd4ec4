"""Streaming, batched translation with an export or a training workdir (`zoo-translate`).

An export runs with TensorFlow alone: this module imports neither Keras nor the model
code unless it is handed a workdir that has no export yet, and for an export it even
keeps `import tensorflow` from importing Keras (TensorFlow looks Keras up eagerly at
import, about a third of its import time), so the first translation comes seconds after
the process starts.

Lines are read as they arrive: a batch is sent as soon as no further complete line is
waiting, so an interactive pipe gets each answer at once, while a file is read in windows
of `window * batch_size` lines that are sorted by length before batching (a batch of
similar lengths decodes in fewer steps; the export's translations do not depend on the
batch, so the reordering changes nothing but speed). Output lines are written in input
order and flushed after every window.
"""

import importlib
import json
import os
import re
import select
import sys
import time

SETTINGS_FILE = "zoo_export.json"
_VERSION_DIR = re.compile(r"[0-9]+")


def _latest_version(base_path):
    versions = [
        int(name)
        for name in os.listdir(base_path)
        if _VERSION_DIR.fullmatch(name) and os.path.isfile(os.path.join(base_path, name, "saved_model.pb"))
    ]
    return os.path.join(base_path, str(max(versions))) if versions else None


def resolve_model(path):
    """What `--model PATH` names: `("saved_model", dir)` or `("workdir", dir)`.

    Accepts a SavedModel directory, a model base path holding numeric versions (the
    newest is used), or a `zoo-train` workdir (its newest `export/<version>` if it has
    one, else the workdir itself, decoded from `best.keras`).
    """
    if not os.path.isdir(path):
        raise FileNotFoundError(
            f"{path}: no such directory; expected a SavedModel, an export directory or a zoo-train workdir"
        )
    if os.path.isfile(os.path.join(path, "saved_model.pb")):
        return "saved_model", path
    latest = _latest_version(path)
    if latest:
        return "saved_model", latest
    if os.path.isfile(os.path.join(path, "best.keras")):
        export_dir = os.path.join(path, "export")
        latest = _latest_version(export_dir) if os.path.isdir(export_dir) else None
        return ("saved_model", latest) if latest else ("workdir", path)
    raise FileNotFoundError(
        f"{path}: found neither saved_model.pb, numeric version directories, nor best.keras; "
        "expected a SavedModel, an export directory or a zoo-train workdir"
    )


def _import_tensorflow(need_keras):
    """`import tensorflow`, without the Keras import it triggers when Keras is not needed."""
    if not need_keras and "tensorflow" not in sys.modules and "keras" not in sys.modules:
        sys.modules["keras"] = None  # TensorFlow treats an unimportable Keras as absent
        try:
            return importlib.import_module("tensorflow")
        finally:
            del sys.modules["keras"]
    return importlib.import_module("tensorflow")


def load_translate_fn(path, beam_width=None):
    """A function `list of bytes -> list of bytes` translating a batch of source lines.

    Args:
      path: see `resolve_model`.
      beam_width: None for the export's `serving_default` (its own default beam);
        an int for the `beam_search` signature with that beam and one hypothesis.

    Returns:
      `(translate, description)`: the function and a line saying what runs.
    """
    kind, path = resolve_model(path)
    tf = _import_tensorflow(need_keras=kind == "workdir")
    if kind == "saved_model":
        loaded = owner = tf.saved_model.load(path)
        settings_path = os.path.join(path, "assets.extra", SETTINGS_FILE)
        settings = {}
        if os.path.isfile(settings_path):
            with open(settings_path, encoding="utf-8") as f:
                settings = json.load(f)
        default = loaded.signatures["serving_default"]
        beam = loaded.signatures["beam_search"]
    else:
        # Imported only here: decoding a workdir needs Keras and the model code.
        from zoo.export.saved_model import Translator, load_workdir, translator_settings

        model, source_tokenizer, target_tokenizer, config = load_workdir(path)
        translator = owner = Translator(model, source_tokenizer, target_tokenizer, **translator_settings(config))
        settings = translator.settings()
        default = translator.serving_default
        beam = translator.beam_search
    length_penalty = float(settings.get("length_penalty", 0.6))

    if beam_width is None:
        def translate(lines):
            return default(source=tf.constant(lines, tf.string))["translation"].numpy().tolist()
        description = f"{path}: serving_default (beam width {settings.get('beam_width', '?')})"
    else:
        if beam_width < 1:
            raise ValueError(f"beam_width must be >= 1, received {beam_width}")

        def translate(lines):
            outputs = beam(
                source=tf.constant(lines, tf.string),
                beam_width=tf.constant(beam_width, tf.int32),
                num_hypotheses=tf.constant(1, tf.int32),
                length_penalty=tf.constant(length_penalty, tf.float32),
            )
            return outputs["translations"][:, 0].numpy().tolist()
        description = f"{path}: beam_search (beam width {beam_width}, length penalty {length_penalty})"
    # The functions hold their module weakly: keep it alive as long as `translate` lives.
    translate.module = owner
    return translate, description


def _ready(fd):
    """True when reading `fd` would not block (always for regular files)."""
    try:
        return bool(select.select([fd], [], [], 0)[0])
    except (OSError, ValueError):  # select does not take this kind of file (e.g. on Windows)
        return True


def read_line_windows(fd, limit):
    """Yields lists of lines (bytes, no line ending) from file descriptor `fd`.

    A window holds at most `limit` lines and is yielded as soon as no further complete
    line can be read without waiting. The last line may lack its newline.
    """
    buffer = b""
    pending = []
    at_end = False
    while True:
        while not at_end and (not pending or (len(pending) < limit and _ready(fd))):
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                at_end = True
                if buffer:
                    pending.append(buffer)
                    buffer = b""
                break
            *lines, buffer = (buffer + chunk).split(b"\n")
            pending.extend(lines)
        if not pending:
            return
        window, pending = pending[:limit], pending[limit:]
        yield [line[:-1] if line.endswith(b"\r") else line for line in window]


class Progress:
    """A one-line progress report on a stream: lines done and lines per second."""

    def __init__(self, stream, every_seconds=0.5):
        self.stream = stream
        self.every_seconds = every_seconds
        self.start = time.monotonic()
        self.last = 0.0
        self.lines = 0

    def update(self, lines, force=False):
        self.lines += lines
        now = time.monotonic()
        if force or now - self.last >= self.every_seconds:
            self.last = now
            rate = self.lines / max(now - self.start, 1e-9)
            self.stream.write(f"\rzoo-translate: {self.lines} lines, {rate:.1f} lines/s")
            self.stream.flush()

    def close(self):
        self.update(0, force=True)
        self.stream.write("\n")
        self.stream.flush()


def translate_stream(translate, in_fd, out, batch_size=32, window=8, progress=None):
    """Translates every line of `in_fd` to `out`, one output line per input line, in order.

    Args:
      translate: `list of bytes -> list of bytes`, e.g. from `load_translate_fn`.
      in_fd: file descriptor to read source lines from.
      out: binary stream to write translations to.
      batch_size: most sentences per call of `translate`.
      window: lines read ahead (in multiples of `batch_size`) and sorted by length.
      progress: a `Progress` or None.

    Returns:
      The number of lines translated. A blank line gives an empty line without a call.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, received {batch_size}")
    count = 0
    for lines in read_line_windows(in_fd, batch_size * max(window, 1)):
        results = [b""] * len(lines)
        todo = sorted((i for i, line in enumerate(lines) if line.strip()), key=lambda i: len(lines[i]))
        for start in range(0, len(todo), batch_size):
            batch = todo[start : start + batch_size]
            for i, text in zip(batch, translate([lines[i] for i in batch])):
                results[i] = text.replace(b"\n", b" ")
        out.write(b"".join(text + b"\n" for text in results))
        out.flush()
        count += len(lines)
        if progress is not None:
            progress.update(len(lines))
    if progress is not None:
        progress.close()
    return count


def main_stream(model, beam_width=None, batch_size=32, show_progress=None):
    """`zoo-translate`: stdin to stdout; progress on stderr if asked or if it is a terminal."""
    translate, description = load_translate_fn(model, beam_width)
    if show_progress is None:
        show_progress = sys.stderr.isatty()
    if show_progress:
        sys.stderr.write(f"zoo-translate: {description}\n")
    progress = Progress(sys.stderr) if show_progress else None
    return translate_stream(translate, sys.stdin.fileno(), sys.stdout.buffer, batch_size, progress=progress)
