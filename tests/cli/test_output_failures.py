"""zoo-eval and zoo-translate when their standard streams fail: one error line, no traceback."""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# zoo-eval with its evaluation replaced by a canned result: no model, no TensorFlow.
_EVAL = """
import sys
import zoo.inference.evaluation as evaluation
evaluation.evaluate_model = lambda *args, **kwargs: {"bleu": 1.0}
sys.argv = ["zoo-eval", "--model=m", "--tsv=t"]
from recipes import evaluate
evaluate.run()
"""


def run_eval(stdout):
    return subprocess.run([sys.executable, "-c", _EVAL], cwd=ROOT, env=dict(os.environ, PYTHONPATH=ROOT),
                          stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=120)


def test_zoo_eval_says_when_its_results_cannot_be_written():
    with open("/dev/full", "w") as full:
        result = run_eval(full)
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    assert result.stderr.strip().splitlines()[-1] == (
        "zoo-eval: error: cannot write the results to stdout (No space left on device); "
        "expected a writable standard output")


def test_zoo_eval_writes_its_results():
    result = run_eval(subprocess.PIPE)
    assert result.returncode == 0 and result.stdout == '{"bleu": 1.0}\n', result.stderr


def run_closed(module, *args, close):
    """`python -m module args` started with the file descriptors `close` closed (`<&-`, `>&-`)."""
    def closing():
        for fd in close:
            os.close(fd)

    return subprocess.run([sys.executable, "-m", module, *args], cwd=ROOT, env=dict(os.environ, PYTHONPATH=ROOT),
                          stderr=subprocess.PIPE, text=True, timeout=120, preexec_fn=closing)


def test_a_closed_standard_stream_is_one_error_line(tmp_path):
    for module, args, close, message in [
        ("recipes.translate", [f"--model={tmp_path}"], [0], "zoo-translate: error: stdin closed; expected source "
                                                            "lines on stdin"),
        ("recipes.translate", [f"--model={tmp_path}"], [1], "zoo-translate: error: stdout closed; expected a "
                                                            "writable stdout"),
        ("recipes.evaluate", [f"--model={tmp_path}", "--tsv=t"], [1], "zoo-eval: error: stdout closed; expected "
                                                                      "a writable stdout"),
    ]:
        result = run_closed(module, *args, close=close)
        assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
        assert result.stderr.strip().splitlines()[-1] == message
