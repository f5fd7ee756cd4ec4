"""zoo-train's --recipe and --config.<field>: read by absl in every syntax, typos and wrong types in one line."""

import os
import re
import subprocess
import sys

import pytest
from absl import flags

from recipes import recipe_flags
from zoo.cli import CommandError, flag_error_message

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def parsed(argv):
    """Defines --recipe and --config on fresh FlagValues, parses `argv` as zoo-train would."""
    flag_values = flags.FlagValues()
    recipe_flags.define_recipe_flag(flag_values=flag_values)
    recipe, config = recipe_flags.define_config_flag(argv, flag_values)
    flag_values(argv)
    return recipe, config


@pytest.mark.parametrize(
    "argv",
    [
        ["zoo-train", "--recipe=text"],
        ["zoo-train", "--recipe", "text"],
        ["zoo-train", "-recipe=text"],
        ["zoo-train", "-recipe", "text"],
        ["zoo-train", "--config.batch_size=3", "--recipe=text"],  # the overrides may come first
    ],
)
def test_every_absl_syntax_chooses_the_recipe(argv):
    recipe, config = parsed(argv)
    assert recipe == "text" and config.recipe == "text" and config.model == "luong_general"
    assert config.batch_size == (3 if "--config.batch_size=3" in argv else 64)


def test_a_flagfile_chooses_the_recipe_and_sets_fields(tmp_path):
    flagfile = tmp_path / "run.flags"
    flagfile.write_text("--recipe=text\n--config.learning_rate=0.5\n--noconfig.export\n")
    recipe, config = parsed(["zoo-train", f"--flagfile={flagfile}", "--config.batch_size=7"])
    assert (recipe, config.recipe) == ("text", "text")
    assert (config.learning_rate, config.batch_size, config.export) == (0.5, 7, False)
    assert parsed(["zoo-train"])[1].recipe == "dates_bahdanau"  # the default


def test_a_recipe_file_is_a_recipe(tmp_path):
    path = tmp_path / "mine.py"
    path.write_text("from recipes.configs import text\n\ndef get_config():\n"
                    "    config = text.get_config()\n    config.recipe = 'mine'\n    return config\n")
    recipe, config = parsed(["zoo-train", f"-recipe={path}", "--config.decoder_units=8"])
    assert (recipe, config.recipe, config.decoder_units) == (str(path), "mine", 8)
    (tmp_path / "broken.py").write_text("def get_config():\n    return undefined_name\n")
    with pytest.raises(CommandError, match=r"broken\.py: NameError: name 'undefined_name' is not defined"):
        parsed(["zoo-train", f"--recipe={tmp_path / 'broken.py'}"])


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--config.batchsize=3"], r"^--config\.batchsize: the recipe has no field 'batchsize'; "
                                   r"did you mean --config\.batch_size or --config\.eval_batch_size\?$"),
        (["--config.no_such_field=3"], r"^--config\.no_such_field: the recipe has no field 'no_such_field'; "
                                       r"zoo-train --helpfull lists the fields$"),
        (["--config.batch_size.x=3"], r"^--config\.batch_size\.x: field 'batch_size' has no field 'x'"),
        (["--config=text"], r"^--config takes no value: choose the recipe with --recipe NAME"),
        (["--recipe=txt"], r"^--recipe=txt: unknown recipe 'txt'; did you mean 'text'\? expected one of \["),
        (["--recipe"], r"^--recipe needs a value$"),
    ],
)
def test_mistakes_are_one_line_before_anything_runs(argv, message):
    with pytest.raises(CommandError) as raised:
        parsed(["zoo-train", *argv])
    assert re.search(message, str(raised.value)), str(raised.value)
    assert raised.value.status == 2 and "\n" not in str(raised.value)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--config.batch_size=abc"], "--config.batch_size=abc: expected an integer, got 'abc'"),
        (["--config.learning_rate=fast"], "--config.learning_rate=fast: expected a number, got 'fast'"),
        (["--config.export=maybe"], "--config.export=maybe: expected true or false, got 'maybe'"),
    ],
)
def test_a_wrong_type_names_the_field_the_value_and_the_type(argv, message):
    flag_values = flags.FlagValues()
    recipe_flags.define_recipe_flag(flag_values=flag_values)
    recipe_flags.define_config_flag(["zoo-train", *argv], flag_values)
    with pytest.raises(flags.Error) as raised:
        flag_values(["zoo-train", *argv])
    assert flag_error_message(raised.value, flag_values) == message


def zoo_train(*args, cwd=ROOT):
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    return subprocess.Popen([sys.executable, "-m", "recipes.train", *args], cwd=cwd, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def test_zoo_train_answers_a_typo_a_wrong_type_and_a_flagfile_recipe_as_a_user_sees_it(tmp_path):
    flagfile = tmp_path / "run.flags"
    flagfile.write_text(f"-recipe=text\n--workdir={tmp_path / 'run'}\n")
    cases = {  # argv -> the one stderr line
        ("--workdir", str(tmp_path / "w"), "--config.no_such_field=3"):
            r"^zoo-train: error: --config\.no_such_field: the recipe has no field 'no_such_field'",
        ("--workdir", str(tmp_path / "w"), "--config.batchsize=3"): r"did you mean --config\.batch_size",
        ("--workdir", str(tmp_path / "w"), "--config.batch_size=abc"):
            r"^zoo-train: error: --config\.batch_size=abc: expected an integer, got 'abc'$",
        # The text recipe (chosen in the flagfile) needs --train_tsv: nothing is trained.
        (f"--flagfile={flagfile}",): r"^zoo-train: error: .*needs --train_tsv",
    }
    processes = {argv: zoo_train(*argv) for argv in cases}
    for argv, process in processes.items():
        out, err = process.communicate(timeout=300)
        assert process.returncode == 2, (argv, out[-2000:], err[-2000:])
        # TensorFlow's C++ start-up lines (CUDA stubs) are not ours; everything zoo-train says is one line.
        lines = [line for line in err.splitlines() if line.startswith("zoo-train")]
        assert len(lines) == 1 and re.search(cases[argv], lines[0]), (argv, err[-2000:])
        assert "Traceback" not in err and not out.strip(), (argv, err[-2000:])
    assert not os.path.exists(tmp_path / "w") and not os.path.exists(tmp_path / "run" / "checkpoints")


def test_a_device_out_of_memory_is_not_called_an_unwritable_workdir():
    # TensorFlow raises ResourceExhaustedError for a full device memory as for a full disk.
    script = (
        "from recipes.train import run_failure\n"
        "class ResourceExhausted(Exception):\n"
        "    message = ('Graph execution error:\\n\\nDetected at node x defined at (most recent call last):\\n'\n"
        "               'OOM when allocating tensor with shape[64,80,8000] and type float on GPU:0\\n'\n"
        "               '\\t [[{{node x}}]]\\nHint: If you want to see a list of allocated tensors ...')\n"
        "print(run_failure(ResourceExhausted(), 'runs/a'))\n"
        "print(run_failure(OSError(28, 'No space left on device'), 'runs/a'))\n"
    )
    env = dict(os.environ, PYTHONPATH=ROOT)
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, text=True, capture_output=True,
                         check=True).stdout.splitlines()
    assert out == [
        "out of memory: OOM when allocating tensor with shape[64,80,8000] and type float on GPU:0; expected a "
        "smaller batch_size or batch_tokens, max_source_length and max_target_length, or model sizes",
        "cannot write in --workdir runs/a: [Errno 28] No space left on device",
    ]
