"""Files that are either whole or absent, whenever the process is killed (`kill -9` included).

    with atomic_write("results.json") as f:
        json.dump(results, f)

writes a hidden temporary file next to the target (`.results.json.<pid>.<random>.tmp`),
flushes and fsyncs it, renames it over the target (atomic on one file system) and fsyncs
the directory, so that after a kill, or a power cut once the call has returned, `path`
holds either its old content or the new one. A file gets the mode of the file it replaces (one set
by hand, `chmod 600 config.json`, stays), and a new file or directory the mode `open` (`os.mkdir`)
would give it, 0666 (0777) less the umask, not `tempfile`'s private one. A kill before the rename leaves the
temporary file behind, which no reader ever opens; `remove_stale_temporaries` deletes
such leftovers when the next run starts.

Standard library only.
"""

import contextlib
import json
import os
import re
import shutil
import stat
import tempfile

# `.<name>.<pid>.<random>.tmp`, also with an extension after it (Keras saves only `*.keras`).
_TEMPORARY = re.compile(r"^\..+\.(\d+)\.[^.]+\.tmp(\.\w+)?$")


def _process_umask():
    """The process' umask (read once: setting it to read it is not thread-safe)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UMASK = _process_umask()


def _as_open_would(path, mode):
    """Gives the file or directory `path` (a `tempfile` one, 0600 or 0700) the mode that `open` or `os.mkdir`
    would: `mode` (0o666 or 0o777) less the umask, so that the files a run writes read as any other file."""
    os.chmod(path, mode & ~_UMASK)


def _mode_of_replaced(temporary, path):
    """Gives the temporary file that will replace `path` the mode of the file there, else `open`'s."""
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except OSError:  # no file there yet
        _as_open_would(temporary, 0o666)
        return
    os.chmod(temporary, mode)


def _fsync_directory(directory):
    """Makes a rename in `directory` durable (where the OS lets a directory be opened)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # e.g. Windows: directories cannot be opened; the rename is what matters
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_write(path, mode="w", encoding="utf-8", newline=None):
    """Opens a temporary file for writing that replaces `path` when the block ends without error.

    Args:
      path: the file to write.
      mode: "w" (text) or "wb" (bytes).
      encoding, newline: as for `open` (text mode only).

    Yields:
      The open temporary file. On an exception the temporary file is removed and `path`
      is left as it was.
    """
    path = os.fspath(path)
    directory, name = os.path.split(os.path.abspath(path))
    fd, temporary = tempfile.mkstemp(prefix=f".{name}.{os.getpid()}.", suffix=".tmp", dir=directory)
    try:
        _mode_of_replaced(temporary, path)
        text = "b" not in mode
        with os.fdopen(fd, mode, encoding=encoding if text else None, newline=newline if text else None) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(temporary)
        raise
    _fsync_directory(directory)


@contextlib.contextmanager
def atomic_directory(path, replace=True):
    """A temporary directory next to `path` that becomes `path` when the block ends without error.

    Every file written into it is fsynced, then the directory is renamed to `path`, so
    `path` either does not exist or holds everything (e.g. a tokenizer's files). An
    existing `path` is replaced, unless `replace` is False (then the rename fails on it).

    Yields:
      The temporary directory's path.
    """
    path = os.path.abspath(os.fspath(path))
    parent, name = os.path.split(path)
    os.makedirs(parent, exist_ok=True)
    temporary = tempfile.mkdtemp(prefix=f".{name}.{os.getpid()}.", suffix=".tmp", dir=parent)
    try:
        _as_open_would(temporary, 0o777)
        yield temporary
        for root, _, files in os.walk(temporary):
            for file in files:
                with open(os.path.join(root, file), "rb") as f:
                    os.fsync(f.fileno())
        if replace and os.path.isdir(path):
            shutil.rmtree(path)  # an incomplete directory from before (a complete one is never rewritten)
        os.rename(temporary, path)
    except BaseException:
        shutil.rmtree(temporary, ignore_errors=True)
        raise
    _fsync_directory(parent)


def temporary_path(path, suffix=""):
    """A fresh hidden name next to `path` that `remove_stale_temporaries` recognizes."""
    directory, name = os.path.split(os.path.abspath(os.fspath(path)))
    fd, temporary = tempfile.mkstemp(prefix=f".{name}.{os.getpid()}.", suffix=".tmp" + suffix, dir=directory)
    os.close(fd)
    _mode_of_replaced(temporary, path)
    return temporary


def write_text(path, text, encoding="utf-8"):
    """Writes `text` to `path` atomically (newlines kept as given)."""
    with atomic_write(path, "w", encoding=encoding, newline="") as f:
        f.write(text)


def save_model_atomically(model, path):
    """Saves a Keras `model` to `path` (`.keras`) through a temporary file in the same directory.

    `os.replace` is atomic on one file system, so `path` always holds a complete model:
    a kill during the save leaves the previous file untouched.
    """
    temporary = temporary_path(path, ".keras")  # Keras saves only to `*.keras` names
    try:
        model.save(temporary)
        with open(temporary, "rb") as f:
            os.fsync(f.fileno())
        os.replace(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.remove(temporary)


def write_json(path, value, **dump_kwargs):
    """Writes `value` as indented JSON (with a final newline) to `path` atomically."""
    dump_kwargs.setdefault("indent", 2)
    write_text(path, json.dumps(value, **dump_kwargs) + "\n")


def remove_stale_temporaries(directory):
    """Deletes the temporary files and directories a killed writer left in `directory`.

    Those of a process that is still running (its pid is alive) are kept.

    Returns:
      The names removed.
    """
    removed = []
    if not os.path.isdir(directory):
        return removed
    for name in os.listdir(directory):
        match = _TEMPORARY.match(name)
        if match and not _alive(int(match.group(1))):
            target = os.path.join(directory, name)
            with contextlib.suppress(FileNotFoundError):
                if os.path.isdir(target):
                    shutil.rmtree(target)
                else:
                    os.remove(target)
                removed.append(name)
    return removed


def _alive(pid):
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, owned by someone else
        return True
    return True
