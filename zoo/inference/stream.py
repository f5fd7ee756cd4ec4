"""Streaming, batched translation of a file descriptor: the stdin runner of `zoo-translate`.

Lines are read as they arrive: a batch is sent as soon as no further complete line is
waiting, so an interactive pipe gets each answer at once, while a file is read in windows
of `window * batch_size` lines that are sorted by length before batching
(`zoo.inference.batching`). Output lines are written in input order and flushed after
every window.
"""

import os
import select
import stat
import sys

from zoo.inference.batching import translate_in_batches
from zoo.inference.loading import load_translate_fn
from zoo.progress import Progress

_BOM = b"\xef\xbb\xbf"  # UTF-8's byte-order mark


class OutputError(OSError):
    """The translations could not be written (a full disk, a closed file); the message says where."""


def _ready(fd):
    """True when reading `fd` would not block (always for regular files)."""
    try:
        return bool(select.select([fd], [], [], 0)[0])
    except (OSError, ValueError):  # select does not take this kind of file (e.g. on Windows)
        return True


def read_line_windows(fd, limit):
    """Yields lists of lines (bytes, no line ending) from file descriptor `fd`.

    A window holds at most `limit` lines and is yielded as soon as no further complete
    line can be read without waiting. The last line may lack its newline. A UTF-8 byte-order
    mark at the start (as Windows editors write) is dropped, as the TSV reader drops it.
    """
    buffer = b""
    pending = []
    at_end = False
    at_start = True  # the first bytes may be a byte-order mark, which can arrive a byte at a time
    while True:
        while not at_end and (not pending or (len(pending) < limit and _ready(fd))):
            chunk = os.read(fd, 1 << 16)
            data = buffer + chunk
            if at_start and chunk and len(data) < len(_BOM) and _BOM.startswith(data):
                buffer = data
                continue
            if at_start:
                data, at_start = data[len(_BOM):] if data.startswith(_BOM) else data, False
            if not chunk:
                at_end = True
                if data:
                    pending.append(data)
                buffer = b""
                break
            *lines, buffer = data.split(b"\n")
            pending.extend(lines)
        if not pending:
            return
        window, pending = pending[:limit], pending[limit:]
        yield [line[:-1] if line.endswith(b"\r") else line for line in window]


def lines_left(fd):
    """Lines from the current offset of `fd` to its end if it is a regular file, else None."""
    try:
        info = os.fstat(fd)
        offset = os.lseek(fd, 0, os.SEEK_CUR)
    except OSError:  # a pipe or a terminal: the total is not known in advance
        return None
    if not stat.S_ISREG(info.st_mode):
        return None
    count, last = 0, b"\n"
    while offset < info.st_size:
        chunk = os.pread(fd, 1 << 20, offset)
        if not chunk:
            break
        count += chunk.count(b"\n")
        last = chunk[-1:]
        offset += len(chunk)
    return count + (last != b"\n")  # a last line without its newline


def translate_stream(translate, in_fd, out, batch_size=32, window=8, progress=None, in_flight=1):
    """Translates every line of `in_fd` to `out`, one output line per input line, in order.

    Args:
      translate: `list of bytes -> list of bytes`, e.g. from `load_translate_fn`.
      in_fd: file descriptor to read source lines from.
      out: binary stream to write translations to.
      batch_size: most sentences per call of `translate`.
      window: lines read ahead (in multiples of `batch_size`) and sorted by length.
      progress: a `zoo.progress.Progress` counting lines, or None; closed at the end.
      in_flight: batches translated at once (`translate_in_batches`).

    Returns:
      The number of lines translated. A blank line gives an empty line without a call.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, received {batch_size}")
    count = 0
    for lines in read_line_windows(in_fd, batch_size * max(window, 1)):
        results = [b""] * len(lines)
        todo = [i for i, line in enumerate(lines) if line.strip()]
        translations = translate_in_batches(translate, [lines[i] for i in todo], batch_size, in_flight=in_flight)
        for i, text in zip(todo, translations):
            results[i] = text.replace(b"\n", b" ")
        try:
            out.write(b"".join(text + b"\n" for text in results))
            out.flush()
        except BrokenPipeError:  # the reader is gone: the caller stops quietly
            raise
        except OSError as error:
            name = getattr(out, "name", None)  # "<stdout>", a path, or a descriptor's number
            where = name.strip("<>") if isinstance(name, str) else "the output"
            raise OutputError(f"cannot write the translations to {where} ({error.strerror or error}); "
                              "expected a writable output") from None
        count += len(lines)
        if progress is not None:
            progress.update(len(lines))
    if progress is not None:
        progress.close()
    return count


def translate_stdin(model, beam_width=None, batch_size=32, show_progress=None, sampling=None, shortlist=None,
                    in_flight=1):
    """`zoo-translate`: stdin to stdout; progress on stderr if asked or if it is a terminal.

    Args:
      model: what `--model` names (see `resolve_model`).
      beam_width: None for the export's default decoding, else beam search of that width.
      batch_size: most sentences translated at once.
      show_progress: None shows progress when stderr is a terminal (`zoo.progress`).
      sampling: None, or the sampling parameters of `load_translate_fn`.
      shortlist: None, True or False: vocabulary selection, see `load_translate_fn`.
      in_flight: batches translated at once (`translate_in_batches`).

    Returns:
      The number of lines translated.
    """
    translate, description = load_translate_fn(model, beam_width, sampling, shortlist)
    # A file on stdin has a known number of lines: the report then shows a percentage and the time left.
    progress = Progress("zoo-translate", total=lines_left(sys.stdin.fileno()), unit="lines", enabled=show_progress,
                        keep=True)
    if progress.enabled:
        sys.stderr.write(f"zoo-translate: {description}\n")
    return translate_stream(translate, sys.stdin.fileno(), sys.stdout.buffer, batch_size, progress=progress,
                            in_flight=in_flight)
