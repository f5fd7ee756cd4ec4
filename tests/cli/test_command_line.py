"""zoo.cli: what a user gets for each kind of command-line mistake (one line), and the help layout."""

import os
import signal
import subprocess
import sys

import pytest
from absl import flags

from zoo import cli


def flag_values():
    values = flags.FlagValues()
    flags.DEFINE_string("model", None, "an export directory", flag_values=values)
    flags.DEFINE_integer("batch_size", 64, "sentences at once", lower_bound=1, flag_values=values)
    flags.DEFINE_integer("rest_api_port", 8501, "port", lower_bound=1, upper_bound=65535, flag_values=values)
    flags.DEFINE_float("length_penalty", 0.6, "alpha", lower_bound=0.0, flag_values=values)
    flags.DEFINE_bool("progress", None, "show progress", flag_values=values)
    flags.mark_flag_as_required("model", flag_values=values)
    return values


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--model=m", "--batchsize=3"], "unknown flag --batchsize; did you mean --batch_size?"),
        (["--model=m", "--zzz=3"], "unknown flag --zzz; --help lists the flags"),
        (["--model=m", "--batch_size=-2"], "--batch_size=-2: -2 is not a positive integer"),
        (["--model=m", "--batch_size=many"], "--batch_size=many: expected a positive integer, got 'many'"),
        (["--model=m", "--rest_api_port=70000"], "--rest_api_port=70000: 70000 is not an integer in the range [1, 65535]"),
        (["--model=m", "--length_penalty=high"], "--length_penalty=high: expected a non-negative number, got 'high'"),
        (["--model=m", "--progress=perhaps"], "--progress=perhaps: expected true or false, got 'perhaps'"),
        ([], "--model is required: an export directory"),
        (["--model"], "--model needs a value"),
        (["--flagfile=/no/such.flags"], "cannot read --flagfile: [Errno 2] No such file or directory: '/no/such.flags'"),
    ],
)
def test_each_flag_mistake_is_one_line_naming_flag_value_and_expectation(argv, message):
    values = flag_values()
    with pytest.raises(flags.Error) as raised:
        values(["zoo-x", *argv])
    assert cli.flag_error_message(raised.value, values) == message


def test_help_text_lists_own_flags_one_line_each_with_defaults_and_examples():
    values = flag_values()
    doc = "`zoo-x`: does x to y.\n\n    zoo-x --model runs/a --batch_size 8\n\nMore words.\n"
    text = cli.help_text("zoo-x", doc, [values["model"], values["batch_size"], values["progress"]])
    assert text.splitlines()[:9] == [
        "zoo-x: does x to y.",
        "",
        "example:",
        "  zoo-x --model runs/a --batch_size 8",
        "",
        "flags:",
        "  --model         an export directory (required)",
        "  --batch_size    sentences at once (default: 64)",
        "  --[no]progress  show progress",
    ]


def test_writable_directory(tmp_path):
    assert cli.writable_directory(str(tmp_path / "new" / "run"), "--workdir") == str(tmp_path / "new" / "run")
    assert os.listdir(tmp_path) == []  # checked, nothing created
    (tmp_path / "file").write_text("x")
    with pytest.raises(cli.CommandError, match=r"^--workdir .*/file: is a file; expected a directory"):
        cli.writable_directory(str(tmp_path / "file"), "--workdir")
    with pytest.raises(cli.CommandError, match=r"^--workdir .*/file/run: cannot write there \(Not a directory\)"):
        cli.writable_directory(str(tmp_path / "file" / "run"), "--workdir")


@pytest.mark.skipif(not os.path.isdir("/sys/kernel"), reason="needs sysfs, where even root may not create files")
def test_writable_directory_refuses_a_place_without_write_permission():
    with pytest.raises(cli.CommandError, match=r"^--export_dir /sys/zoo_export: cannot write there \((Permission denied|Operation not permitted)\)"):
        cli.writable_directory("/sys/zoo_export", "--export_dir")


def test_sigterm_is_one_line_and_exit_status_143_after_the_clean_up():
    # SIGTERM (timeout, docker stop, Slurm) ended a command at once: no line, no clean-up (a workdir's lock file,
    # temporary files) and status -15.
    script = (
        "import sys, time\n"
        "from zoo import cli\n"
        "def main(argv):\n"
        "    try:\n"  # 'ready' inside the try: a signal between the two lines would skip the finally
        "        print('ready', flush=True)\n"
        "        time.sleep(60)\n"
        "    finally:\n"
        "        print('cleaned up', flush=True)\n"
        "cli.run(main, 'zoo-x', 'zoo-x: does x.', interrupted='the same command resumes')\n"
    )
    process = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdout.readline() == "ready\n"
    process.send_signal(signal.SIGTERM)
    stdout, stderr = process.communicate(timeout=30)
    assert process.returncode == 143 and stdout == "cleaned up\n"
    assert stderr == "zoo-x: terminated; the same command resumes\n"


def test_ctrl_c_is_one_line_and_exit_status_130_not_a_traceback():
    script = (
        "import sys, time\n"
        "from zoo import cli\n"
        "def main(argv):\n"
        "    print('ready', flush=True)\n"
        "    time.sleep(60)\n"
        "cli.run(main, 'zoo-x', 'zoo-x: does x.', interrupted='the same command resumes')\n"
    )
    process = subprocess.Popen(  # SIGINT as in a terminal, even where the tests run in a background job (ignored)
        [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert process.stdout.readline() == "ready\n"
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 130
    assert stderr == "zoo-x: interrupted; the same command resumes\n"
