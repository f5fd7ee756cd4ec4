"""Progress as a user sees it: zoo-eval, zoo-translate on a file and zoo-export report on a terminal
(a pseudo-terminal here), and say nothing when stderr is a pipe or a log file."""

import json
import os
import pty
import re
import subprocess
import sys
import threading

from export_test_model import BEAM_WIDTH, MAX_SOURCE_LENGTH, REPO_ROOT, TEST_SOURCES, write_workdir
from zoo.export import SIGNATURES
from zoo.inference.batching import translate_in_batches
from zoo.inference.stream import lines_left
from zoo.progress import Progress


class Terminal:
    """A stderr that is a terminal: what the process writes to it is collected in `text`."""

    def __init__(self):
        self.master, self.slave = pty.openpty()
        self.chunks = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        while True:
            try:
                chunk = os.read(self.master, 4096)
            except OSError:  # the last writer is gone
                return
            if not chunk:
                return
            self.chunks.append(chunk)

    @property
    def text(self):
        self.reader.join(timeout=60)
        return b"".join(self.chunks).decode("utf-8", "replace")


def start(module, *flags, stdin=None, terminal=None):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="", PYTHONPATH=REPO_ROOT)
    process = subprocess.Popen([sys.executable, "-m", module, *flags], cwd=REPO_ROOT, env=env, stdin=stdin,
                               stdout=subprocess.PIPE, stderr=terminal.slave if terminal else subprocess.PIPE)
    if terminal:
        os.close(terminal.slave)
    return process


def test_zoo_eval_translate_and_export_show_progress_on_a_terminal_only(export_base, parts, tmp_path):
    sources = (TEST_SOURCES * 8)[:37]
    (tmp_path / "test.tsv").write_text("".join(f"{s}\t2021-03-03\n" for s in sources), encoding="utf-8")
    (tmp_path / "in.txt").write_text("\n".join(sources) + "\n", encoding="utf-8")
    model, source_tokenizer, target_tokenizer = parts
    workdir = write_workdir(str(tmp_path / "run"), model, source_tokenizer, target_tokenizer,
                            {"max_source_length": MAX_SOURCE_LENGTH, "final_beam_width": BEAM_WIDTH})
    terminals = [Terminal() for _ in range(3)]
    with open(tmp_path / "in.txt", "rb") as text_file:
        processes = [
            start("recipes.evaluate", f"--model={export_base}", f"--tsv={tmp_path / 'test.tsv'}", "--batch_size=4",
                  terminal=terminals[0]),
            start("recipes.translate", f"--model={export_base}", "--batch_size=4", stdin=text_file,
                  terminal=terminals[1]),
            start("recipes.export", f"--workdir={workdir}", terminal=terminals[2]),
            start("recipes.evaluate", f"--model={export_base}", f"--tsv={tmp_path / 'test.tsv'}"),  # a pipe
        ]
        outputs = [process.communicate(timeout=600) for process in processes]
    for process, (out, err) in zip(processes, outputs):
        assert process.returncode == 0, (process.args, err)
    evaluated, translated, exported = (terminal.text for terminal in terminals)

    assert json.loads(outputs[0][0])["sentences"] == 37  # stdout keeps only the JSON
    assert re.search(r"\rzoo-eval: \d+/37 sentences \(\d+%\)", evaluated), evaluated[-2000:]
    # stdin is a file: its lines are counted first, and the last report stays on screen.
    assert len(outputs[1][0].decode().splitlines()) == 37
    assert re.search(r"\rzoo-translate: 37/37 lines \(100%\), [\d.,]+/s *\r?\n", translated), translated[-2000:]
    steps = len(SIGNATURES) + 2  # trace each signature, save, settings and warmup
    assert re.search(rf"\rexport: \d/{steps} steps \(\d+%\), [\d.]+(/s|s each)", exported), exported[-2000:]
    assert outputs[2][0].decode().strip() == os.path.join(workdir, "export", "1")
    # Piped stderr: no progress at all.
    assert b"\r" not in outputs[3][1] and b"zoo-eval:" not in outputs[3][1]


class FakeTerminal:
    def __init__(self):
        self.text = ""

    def write(self, text):
        self.text += text

    def flush(self):
        pass

    def isatty(self):
        return True


def test_translate_in_batches_counts_every_sentence_once():
    stream = FakeTerminal()
    with Progress("zoo-eval", total=10, unit="sentences", stream=stream, every_seconds=0) as progress:
        assert translate_in_batches(lambda batch: [s.upper() for s in batch], list("abcdefghij"), 3, progress) == \
            list("ABCDEFGHIJ")
        assert progress.count == 10
    assert [re.search(r"(\d+)/10", part).group(1) for part in stream.text.split("\r") if "/10" in part] == \
        ["3", "6", "9", "10"]


def test_lines_left_counts_the_rest_of_a_regular_file_only(tmp_path):
    path = tmp_path / "in.txt"
    path.write_bytes(b"a\nb\n\nlast without newline")
    with open(path, "rb") as f:
        assert lines_left(f.fileno()) == 4
        os.read(f.fileno(), 2)  # past "a\n", as zoo-translate reads it
        assert lines_left(f.fileno()) == 3
    read_fd, write_fd = os.pipe()
    assert lines_left(read_fd) is None
    os.close(read_fd)
    os.close(write_fd)
