"""Training curves of a `zoo-train` workdir, read from its TensorBoard event files."""

import glob
import os

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from zoo.constants import read_json_object
from zoo.plot.labels import legend_label

# What zoo-train records (docs/interfaces.md): Keras writes batch_* every 50 steps under
# logs/train, the dev evaluation writes its scores at the optimizer step under logs/dev.
TRAIN_LOSS = "batch_loss"
DEV_SCORES = (("bleu", "BLEU", 1.0), ("chrf", "chrF", 1.0), ("exact_match", "exact match (%)", 100.0))


def read_scalars(log_dir):
    """The scalars of every TensorBoard event file directly in `log_dir`.

    Files are read in the order they were written (one per run). zoo-train logs at the optimizer
    step, which a resumed run continues from its checkpoint: where it logs a step again (one the
    run before it had passed when it stopped), the later file's value is the one kept.

    Returns:
      dict tag -> (steps int64 `(N,)`, values float64 `(N,)`), sorted by step; `{}` when the
      directory holds no events.
    """
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader
    from tensorboard.util import tensor_util

    series = {}  # tag -> {step: value}
    for path in sorted(glob.glob(os.path.join(log_dir, "events.out.tfevents.*"))):
        for event in EventFileLoader(path).Load():
            for value in event.summary.value:
                number = (value.simple_value if value.HasField("simple_value")
                          else float(tensor_util.make_ndarray(value.tensor)))
                series.setdefault(value.tag, {})[int(event.step)] = number
    return {tag: tuple(np.array(column) for column in zip(*sorted(points.items()))) for tag, points in series.items()}


def curves_figure(workdir, title=None):
    """Training loss and dev scores against the optimizer step, side by side.

    Args:
      workdir: a `zoo-train` workdir (its `logs/train` and `logs/dev` event files).
      title: optional title; default the workdir's name.

    Returns:
      a `matplotlib.figure.Figure` with an Agg canvas.

    Raises:
      FileNotFoundError: `workdir/logs` does not exist.
    """
    logs = os.path.join(workdir, "logs")
    if not os.path.isdir(logs):
        raise FileNotFoundError(f"{logs}: no such directory; expected the workdir of a zoo-train run")
    train, dev = read_scalars(os.path.join(logs, "train")), read_scalars(os.path.join(logs, "dev"))
    figure = Figure(figsize=(10, 4), dpi=100, layout="constrained")
    FigureCanvasAgg(figure)
    loss_axes, dev_axes = figure.subplots(1, 2)
    if TRAIN_LOSS in train:
        steps, values = train[TRAIN_LOSS]
        loss_axes.plot(steps, values, marker=".", label="training loss")
    else:
        _say_empty(loss_axes, "no training loss yet (recorded every 50 steps)")
    loss_axes.set(xlabel="step", ylabel=f"cross-entropy per {_loss_unit(workdir)}", title="training loss")
    for tag, label, scale in DEV_SCORES:
        if tag in dev:
            steps, values = dev[tag]
            dev_axes.plot(steps, values * scale, marker="o", label=label)
    if any(tag in dev for tag, _, _ in DEV_SCORES):
        dev_axes.legend()
    else:
        _say_empty(dev_axes, "no dev evaluation yet")
    dev_axes.set(xlabel="step", ylabel="score", title="dev set")
    for axes in (loss_axes, dev_axes):
        axes.grid(alpha=0.3)
    figure.suptitle(title or os.path.basename(os.path.normpath(workdir)), parse_math=False)
    return figure


def _loss_unit(workdir):
    """What the run's loss is over: "sentence" with `loss_normalization="sentences"` (the text recipe's), else "token"."""
    try:
        config = read_json_object(os.path.join(workdir, "config.json"))
    except (OSError, ValueError):  # no config.json (logs alone), or a damaged one
        config = {}
    return "sentence" if config.get("loss_normalization") == "sentences" else "token"


def _say_empty(axes, message):
    axes.text(0.5, 0.5, message, ha="center", va="center", transform=axes.transAxes, color="gray")


def learning_curves_figure(runs, title=None, ylabel="dev BLEU"):
    """Several runs' scores against the training step on one chart (e.g. two toolkits side by side).

    Args:
      runs: dict run name -> sequence of `(step, score)` pairs (any order).
      title: optional title.
      ylabel: what the scores are.

    Returns:
      a `matplotlib.figure.Figure` with an Agg canvas.

    Raises:
      ValueError: no runs, or a run without points or with a point that is not (step, score).
    """
    if not runs:
        raise ValueError("learning_curves_figure: expected at least one run, received none")
    figure = Figure(figsize=(7, 4.5), dpi=100, layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.subplots()
    for name, points in runs.items():
        try:
            steps, scores = zip(*sorted((float(step), float(score)) for step, score in points))
        except (TypeError, ValueError):
            raise ValueError(f"learning_curves_figure: run {name!r} must be a non-empty sequence of "
                             f"(step, score) pairs, received {points!r:.200}") from None
        axes.plot(steps, scores, marker="o", label=legend_label(name))
    axes.set(xlabel="training step", ylabel=ylabel)
    axes.grid(alpha=0.3)
    axes.legend()
    if title:
        axes.set_title(title, wrap=True)
    return figure
