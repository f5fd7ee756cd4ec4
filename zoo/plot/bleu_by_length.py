"""BLEU by source sentence length, one curve per model (Bahdanau et al., 2015, figure 2)."""

import re

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from zoo.plot.labels import legend_label

_NAME = re.compile(r"^(?P<model>.*?)-(?P<length>[0-9]+)$")  # "RNNsearch-50": model, longest training sentence
LINE_STYLES = ("--", "-", ":", "-.")  # by training length, shortest first: dashed -30, solid -50 as in the paper
MARKERS = ("o", "s", "^", "D", "v", "P")


def bleu_by_length_figure(buckets, curves, counts=None, title=None):
    """BLEU of each model on the test sentences of each source-length bucket.

    Curves named `<model>-<N>` (N = the longest training sentence, as in the paper's
    "RNNsearch-50") share a colour and marker per model and a line style per N.

    Args:
      buckets: bucket labels along the x axis, e.g. `["0-10", "10-20", ..., "60+"]`.
      curves: dict name -> list of BLEU per bucket (`None` where a bucket is empty).
      counts: optional test sentences per bucket, shown under the labels.
      title: optional title.

    Returns:
      a `matplotlib.figure.Figure` with an Agg canvas.

    Raises:
      ValueError: a curve whose length is not `len(buckets)`.
    """
    for name, values in curves.items():
        if len(values) != len(buckets):
            raise ValueError(f"curve {name!r} has {len(values)} values; expected one per bucket ({len(buckets)})")
    parts = {name: _split_name(name) for name in curves}
    models = list(dict.fromkeys(model for model, _ in parts.values()))  # first-seen order
    lengths = sorted({length for _, length in parts.values()}, key=lambda n: (n is None, n))

    figure = Figure(figsize=(7, 4.5), dpi=100, layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    positions = np.arange(len(buckets))
    for name, values in curves.items():
        model, length = parts[name]
        index = models.index(model)
        y = np.array([np.nan if v is None else float(v) for v in values])
        axes.plot(positions, y, label=legend_label(name), color=f"C{index % 10}", marker=MARKERS[index % len(MARKERS)],
                  linestyle=LINE_STYLES[lengths.index(length) % len(LINE_STYLES)])
    labels = list(buckets) if counts is None else [f"{b}\n({n})" for b, n in zip(buckets, counts)]
    axes.set_xticks(positions, labels=labels)
    axes.set_xlabel("source sentence length (words)" + ("; test sentences in brackets" if counts else ""))
    axes.set_ylabel("BLEU")
    axes.set_ylim(bottom=0)
    axes.grid(alpha=0.3)
    axes.legend()
    if title:
        axes.set_title(title, parse_math=False)
    return figure


def _split_name(name):
    """`"RNNsearch-50"` -> `("RNNsearch", 50)`; a name without `-<N>` -> `(name, None)`."""
    match = _NAME.match(name)
    return (match["model"], int(match["length"])) if match else (name, None)
