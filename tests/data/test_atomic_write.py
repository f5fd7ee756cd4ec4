"""zoo.atomic_write: a file killed (SIGKILL) in the middle of a write is its old or new self, never half."""

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from zoo.atomic_write import (
    atomic_directory, atomic_write, remove_stale_temporaries, temporary_path, write_json, write_text,
)
from zoo.data import DataError, write_tsv

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Rewrites one ~0.6 MB JSON file as fast as it can, alternating two contents, until killed;
# says "ready" once the first one is whole.
WRITER = """
import json, sys
from zoo.atomic_write import atomic_write
path = sys.argv[1]
values = [{"version": v, "payload": [v] * 200_000} for v in (1, 2)]
i = 0
while True:
    with atomic_write(path) as f:  # json.dump writes as it goes: the file is open most of the time
        json.dump(values[i % 2], f)
    if i == 0:
        print("ready", flush=True)  # one whole file exists
    i += 1
"""


def test_write_json_and_text_replace_the_file(tmp_path):
    path = tmp_path / "results.json"
    write_json(path, {"bleu": 1.5})
    assert path.read_text() == '{\n  "bleu": 1.5\n}\n'
    write_text(path, "a\r\nb")
    assert path.read_bytes() == b"a\r\nb"
    assert os.listdir(tmp_path) == ["results.json"]


def test_an_exception_leaves_the_old_file_and_no_temporary(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_text("old\n")
    with pytest.raises(RuntimeError):
        with atomic_write(path) as f:
            f.write("new, half")
            raise RuntimeError("disk gone")
    assert path.read_text() == "old\n" and os.listdir(tmp_path) == ["vocab.txt"]


def test_sigkill_during_writes_never_leaves_half_a_file(tmp_path):
    path = tmp_path / "results.json"
    rng = random.Random(0)
    env = dict(os.environ, PYTHONPATH=ROOT)
    leftovers = 0
    for attempt in range(8):
        writer = subprocess.Popen([sys.executable, "-c", WRITER, str(path)], env=env, stdout=subprocess.PIPE, text=True)
        assert writer.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0.2, 0.8))  # a few writes of ~0.1 s each: the kill lands inside one
        writer.send_signal(signal.SIGKILL)
        writer.wait()
        writer.stdout.close()
        assert writer.returncode == -signal.SIGKILL
        with open(path) as f:
            value = json.load(f)  # whole: never a truncated JSON document
        assert value["version"] in (1, 2) and len(value["payload"]) == 200_000
        stale = [name for name in os.listdir(tmp_path) if name != "results.json"]
        leftovers += len(stale)
        assert sorted(remove_stale_temporaries(str(tmp_path))) == sorted(stale)
        assert os.listdir(tmp_path) == ["results.json"]
    assert leftovers > 0  # the kills did land inside writes (a temporary was left behind)


def test_remove_stale_temporaries_keeps_files_of_live_writers(tmp_path):
    live = tmp_path / f".results.json.{os.getpid()}.abc123.tmp"
    dead = tmp_path / ".results.json.999999999.abc123.tmp"
    other = tmp_path / "notes.tmp"
    for file in (live, dead, other):
        file.write_text("x")
    assert remove_stale_temporaries(str(tmp_path)) == [dead.name]
    assert sorted(os.listdir(tmp_path)) == sorted([live.name, other.name])


def test_atomic_directory_appears_whole_or_not_at_all(tmp_path):
    target = tmp_path / "vocab" / "source"
    with pytest.raises(RuntimeError):
        with atomic_directory(target) as temporary:
            (Path(temporary) / "vocab.txt").write_text("a\n")
            raise RuntimeError("killed between the two files")
    assert not target.exists() and os.listdir(tmp_path / "vocab") == []
    target.mkdir()
    (target / "vocab.txt").write_text("half")  # an incomplete directory left by an older writer
    with atomic_directory(target) as temporary:
        (Path(temporary) / "vocab.txt").write_text("a\n")
        (Path(temporary) / "tokenizer.json").write_text("{}")
    assert sorted(os.listdir(target)) == ["tokenizer.json", "vocab.txt"] and (target / "vocab.txt").read_text() == "a\n"
    assert os.listdir(tmp_path / "vocab") == ["source"]


def test_stale_temporary_directories_are_removed(tmp_path):
    stale = tmp_path / ".source.999999999.x1y2.tmp"
    stale.mkdir()
    (stale / "vocab.txt").write_text("a")
    assert remove_stale_temporaries(str(tmp_path)) == [stale.name] and os.listdir(tmp_path) == []


def test_write_tsv_is_atomic(tmp_path):
    path = tmp_path / "train.tsv"
    write_tsv(str(path), [("a", "b")])
    with pytest.raises(DataError):
        write_tsv(str(path), [("c", "d"), ("bad\tsource", "e")])  # refused half way through
    assert path.read_text() == "a\tb\n" and os.listdir(tmp_path) == ["train.tsv"]


# Writes a file, a directory and a temporary_path in argv[1] under umask 027, and prints their modes.
MODES = """
import json, os, sys
os.umask(0o027)
from zoo.atomic_write import atomic_directory, temporary_path, write_json
directory = sys.argv[1]
write_json(os.path.join(directory, "config.json"), {})
with atomic_directory(os.path.join(directory, "export", "1")) as temporary:
    open(os.path.join(temporary, "saved_model.pb"), "w").close()
modes = {name: os.stat(os.path.join(directory, name)).st_mode & 0o777
         for name in ("config.json", os.path.join("export", "1"), temporary_path(os.path.join(directory, "best.keras")))}
print(json.dumps(modes))
"""


def test_written_files_and_directories_get_the_umask_modes_not_tempfile_private_ones(tmp_path):
    # tempfile's own modes (0600, 0700) left exports and config.json unreadable to a server or group.
    env = dict(os.environ, PYTHONPATH=ROOT)
    out = subprocess.run([sys.executable, "-c", MODES, str(tmp_path)], env=env, capture_output=True, text=True,
                         check=True).stdout
    assert sorted(json.loads(out).values()) == [0o640, 0o640, 0o750]


def test_a_replaced_file_keeps_the_mode_set_by_hand(tmp_path):
    path = tmp_path / "config.json"
    path.write_text("{}")
    os.chmod(path, 0o600)  # a user's private config
    write_json(str(path), {"a": 1})
    assert json.loads(path.read_text()) == {"a": 1} and os.stat(path).st_mode & 0o777 == 0o600
    os.chmod(path, 0o664)  # shared with a group
    assert os.stat(temporary_path(str(path))).st_mode & 0o777 == 0o664
