"""`zoo.startup`: the phases of `--profile_startup`, and TensorFlow imported without Keras and JAX."""

import io
import json
import os
import subprocess
import sys

import pytest

from zoo import startup

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def profile(monkeypatch):
    """A profile being taken, whose process started 0.5 s before `zoo.startup` was imported."""
    monkeypatch.setattr(startup, "PROFILE", startup.StartupProfile(imported_at=100.0, age=0.5))
    return startup.PROFILE


def test_the_process_age_is_known_on_linux():
    age = startup.process_age()
    if sys.platform.startswith("linux"):
        assert age is not None and 0 <= age < 3600
    assert startup.StartupProfile(age=None).process_start in ("process start (/proc)", "first import of zoo.startup")


def test_the_phases_add_up_to_the_total_and_a_key_marked_again_adds_up(profile):
    profile.mark("import_tensorflow", "import tensorflow", now=101.5)
    profile.mark("load_saved_model", "tf.saved_model.load", now=102.0)
    profile.mark("import_tensorflow", "import tensorflow", now=102.25)
    report = profile.as_dict("zoo-translate")
    assert report["phases"] == {"python": 0.5, "import_tensorflow": 1.75, "load_saved_model": 0.5}
    assert report["total_seconds"] == pytest.approx(2.75) == pytest.approx(sum(report["phases"].values()))
    assert report["since"] == "process start (/proc)"
    assert set(report["imported"]) == set(startup.WATCHED_MODULES)


def test_the_report_is_one_line_per_phase_the_total_then_json(profile):
    profile.mark("load_saved_model", "tf.saved_model.load", now=101.0)
    stream = io.StringIO()
    startup.report("zoo-eval", "scoring", "sacreBLEU", stream=stream)
    lines = stream.getvalue().splitlines()
    assert [line.split()[4] for line in lines[:3]] == ["python:", "load_saved_model:", "scoring:"]
    assert all(line.startswith("zoo-eval: startup: ") for line in lines[:4]) and "total" in lines[3]
    assert list(json.loads(lines[4])["phases"]) == ["python", "load_saved_model", "scoring"]


def test_marks_and_the_report_do_nothing_unless_enabled(monkeypatch):
    monkeypatch.setattr(startup, "PROFILE", None)
    startup.mark("anything", "nothing")
    stream = io.StringIO()
    startup.report("zoo-translate", "translation", "the rest", stream=stream)
    assert stream.getvalue() == ""

    def translate(lines):
        return lines

    assert startup.mark_first_call(translate, "first_translation", "first call") is translate


def test_the_first_call_alone_ends_its_phase_and_the_function_keeps_its_attributes(profile):
    def translate(lines):
        return [line.upper() for line in lines]

    translate.module = "the SavedModel"
    marked = startup.mark_first_call(translate, "first_translation", "first call")
    assert marked([b"a"]) == [b"A"] and marked.module == "the SavedModel"
    assert list(profile.phases) == ["python", "first_translation"]
    seconds = profile.phases["first_translation"][1]
    marked([b"b"])
    assert profile.phases["first_translation"][1] == seconds


def test_tensorflow_is_imported_without_keras_jax_and_scipy_which_import_afterwards():
    code = (
        "import sys\n"
        "from zoo import startup\n"
        "tf = startup.import_tensorflow()\n"
        "print(sorted(m for m in ('keras', 'jax', 'matplotlib', 'scipy') if sys.modules.get(m) is not None))\n"
        "print(sorted(m for m in startup.TENSORFLOW_OPTIONAL_IMPORTS if m in sys.modules))\n"
        "import keras\n"
        "print(keras.ops.sum(tf.constant([1.0, 2.0])).numpy())\n"
        "import scipy.sparse\n"
        "print(scipy.sparse.issparse(scipy.sparse.eye(2)))\n"
    )
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="3", KERAS_BACKEND="tensorflow")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=240)  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.split("\n")[:4] == ["[]", "[]", "3.0", "True"]


@pytest.mark.parametrize("end, status, stderr", [("pass", 0, ""), ("sys.exit(3)", 3, ""),
                                                  ("sys.exit('no model')", 1, "no model\n")])
def test_a_one_shot_command_ends_with_its_status_and_output_but_without_the_teardown(end, status, stderr):
    code = (
        "import atexit, sys\n"
        "from zoo import startup\n"
        "atexit.register(lambda: print('teardown'))\n"
        "with startup.exit_without_teardown():\n"
        "    print('translation', end='')  # still in the buffer of a pipe\n"
        f"    {end}\n"
        "print('after the block')\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=dict(os.environ, PYTHONPATH=ROOT),
                            capture_output=True, text=True, timeout=60)  # fmt: skip
    assert (result.returncode, result.stdout, result.stderr) == (status, "translation", stderr)
