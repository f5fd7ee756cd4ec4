"""Importing and using the zoo leaves matplotlib's backend as the user (or Colab) set it."""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SCRIPT = """
import sys, tempfile, os
import matplotlib
import zoo, zoo.plot, zoo.training
figure = zoo.plot.attention_figure([[1.0]], ["a"], ["b"])
zoo.plot.save_figure(figure, os.path.join(tempfile.mkdtemp(), "a.png"))
print(matplotlib.get_backend(), matplotlib.rcParams["backend"])
"""


def test_importing_and_plotting_keeps_the_backend():
    env = dict(os.environ, MPLBACKEND="svg", TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    env["PYTHONPATH"] = os.pathsep.join([ROOT, env.get("PYTHONPATH", "")])
    done = subprocess.run([sys.executable, "-c", SCRIPT], env=env, cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["svg", "svg"]
