"""benchmarks/startup.py takes --model relative to the directory it is run from, as the other commands do."""

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Stands in for zoo-translate: fails as it does on a --model that is not a directory (seen from its cwd).
FAKE_TRANSLATE = """
import json, os, sys
model = [arg.split("=", 1)[1] for arg in sys.argv if arg.startswith("--model=")][0]
if not os.path.isdir(model):
    sys.exit(f"zoo-translate: error: --model {model!r} is not a directory")
sys.stdin.read()
print("y", flush=True)
print(json.dumps({"phases": {"python": 0.1}, "total_seconds": 0.1, "imported": {}}), file=sys.stderr)
"""


def test_relative_model_path_is_that_of_the_callers_directory(tmp_path):
    (tmp_path / "export").mkdir()
    fake = tmp_path / "fake_translate.py"
    fake.write_text(FAKE_TRANSLATE)
    command = [sys.executable, os.path.join(ROOT, "benchmarks", "startup.py"), "--model=export", "--runs=1",
               "--warmup=0", f"--zoo_translate={sys.executable} {fake}"]
    finished = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert finished.returncode == 0, finished.stderr[-3000:]
    report = json.loads(finished.stdout)
    assert report["model"] == str(tmp_path / "export")
    assert report["zoo_translate"]["output"] == "y"
