"""Writing figures to files with the Agg canvas, never through pyplot's global backend."""

import os

from matplotlib.backends.backend_agg import FigureCanvasAgg


def save_figure(figure, path, dpi=None):
    """Writes `figure` to `path` (the format follows the extension, e.g. `.png`, `.svg`).

    The figure gets an Agg canvas if it has none: matplotlib's backend, which pyplot and
    notebooks use, is never touched.

    Returns:
      `path`.
    """
    if not isinstance(figure.canvas, FigureCanvasAgg):
        FigureCanvasAgg(figure)
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    figure.savefig(path, dpi=dpi or figure.dpi)
    return path
