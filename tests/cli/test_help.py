"""`--help` of every console script in setup.py: an example and each of its own flags, one line each."""

import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def console_scripts():
    """`{name: (module, function)}` of setup.py's `console_scripts`."""
    with open(os.path.join(ROOT, "setup.py"), encoding="utf-8") as f:
        entries = re.findall(r'"([\w-]+)=([\w.]+):(\w+)"', f.read())
    return {name: (module, function) for name, module, function in entries}


SCRIPTS = console_scripts()
# As the console script does it: `__main__` is a stub, the flags live in the entry point's module.
# The child reports the flags its module defines (name -> help) on stderr, then runs `--help`.
PROGRAM = """
import json, sys
from absl import flags
import {module} as command
own = {{f.name: f.help for f in flags.FLAGS.get_flags_for_module("{module}")}}
sys.stderr.write(json.dumps(own))
sys.stderr.flush()
sys.argv = ["{name}", "{help_flag}"]
command.{function}()
"""


def run_help(names, help_flag):
    env = dict(os.environ, PYTHONPATH=ROOT)
    processes = {
        name: subprocess.Popen(
            [sys.executable, "-c", PROGRAM.format(module=module, function=function, name=name, help_flag=help_flag)],
            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for name, (module, function) in SCRIPTS.items() if name in names
    }
    results = {}
    for name, process in processes.items():
        out, err = process.communicate(timeout=120)
        results[name] = (process.returncode, out, err)
    return results


def test_setup_declares_the_five_commands():
    assert set(SCRIPTS) == {"zoo-train", "zoo-eval", "zoo-export", "zoo-translate", "zoo-serve"}


def test_help_lists_every_own_flag_on_one_line_with_an_example():
    for name, (returncode, out, err) in run_help(SCRIPTS, "--help").items():
        assert returncode == 0, (name, err[-2000:])
        own = json.loads(err[: err.index("}") + 1])
        assert own, name
        lines = out.splitlines()
        assert lines[0].startswith(f"{name}: ") and len(lines[0]) > len(name) + 10, (name, out)
        assert any(re.match(rf"  {name} --\w+", line) for line in lines), (name, out)  # an example invocation
        for flag, text in own.items():
            flag_lines = [line for line in lines if re.match(rf"  --(\[no\])?{flag}\s", line)]
            assert len(flag_lines) == 1, (name, flag, out)
            assert " ".join(text.split()) in flag_lines[0], (name, flag, flag_lines[0])
        assert "--verbosity" not in out and "--helpfull" in out, (name, out)  # absl's own flags wait for --helpfull
    train_lines = run_help({"zoo-train"}, "--help")["zoo-train"][1].splitlines()
    assert any(line.startswith("  --config.<field>=VALUE ") for line in train_lines)


def test_helpfull_adds_the_shared_flags_and_the_recipe_fields():
    results = run_help({"zoo-train", "zoo-serve"}, "--helpfull")
    for name, (returncode, out, err) in results.items():
        assert returncode == 0, (name, err[-2000:])
        assert "--verbosity" in out and "--flagfile" in out, name
    train = results["zoo-train"][1]
    # Every field of the default recipe, with its value and the comment of recipes/configs/base.py.
    assert re.search(r"^  --config\.batch_size=128 +sentences per batch \(length-bucketed\), split across the replicas$", train, re.M), train
    assert re.search(r"^  --config\.final_beam_width=3 +beam width of the final dev evaluation", train, re.M), train
