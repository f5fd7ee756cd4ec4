"""Attention heatmaps: which source tokens each target token looked at."""

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from zoo.plot.labels import fit_text, readable_tokens, text_width

DPI = 100
CELL_INCHES = 0.3  # one token's row or column at full size
MAX_INCHES = 30.0  # the figure never grows beyond this; cells shrink instead
MAX_FONTSIZE = 10.0
MIN_FONTSIZE = 4.0
MARGIN_INCHES = 0.15  # kept free at each side of the title
SENTENCE_LINES = 3  # a sentence label wraps onto at most this many lines, then ends with "…"


def attention_figure(attention, source_tokens, target_tokens, source=None, target=None, title=None):
    """A heatmap of attention weights, tokens on the axes and the sentence pair as axis labels.

    The figure grows with the sentence (0.3 inch per token, at most 30 inches, then the cells
    and the tick font shrink); sentences wrap onto three lines and are then cut with an
    ellipsis, so that nothing lies outside the figure. Weights are coloured on a fixed 0..1
    scale, so figures of different models compare.

    Args:
      attention: float array `(T, S)`: row t is the attention of target token t over the
        source tokens.
      source_tokens: S token strings (x tick labels), shown with `readable_tokens`.
      target_tokens: T token strings (y tick labels).
      source: the source sentence (the x axis label); None labels the axis "source".
      target: the translation (the y axis label); None labels the axis "translation".
      title: optional title above the heatmap.

    Returns:
      a `matplotlib.figure.Figure` with an Agg canvas (`save_figure` writes it to a file).

    Raises:
      ValueError: `attention` is not `(len(target_tokens), len(source_tokens))`.
    """
    attention = np.asarray(attention, dtype=np.float32)
    if attention.ndim != 2 or attention.shape != (len(target_tokens), len(source_tokens)):
        raise ValueError(
            f"expected attention of shape (len(target_tokens), len(source_tokens)) = "
            f"({len(target_tokens)}, {len(source_tokens)}), got {attention.shape}"
        )
    x_labels, y_labels = readable_tokens(source_tokens), readable_tokens(target_tokens)
    columns, rows = max(len(x_labels), 1), max(len(y_labels), 1)
    cell = min(CELL_INCHES, (MAX_INCHES - 4.0) / columns, (MAX_INCHES - 4.0) / rows)
    fontsize = float(np.clip(cell * 72 * 0.6, MIN_FONTSIZE, MAX_FONTSIZE))  # a label fits its cell
    longest = max([text_width(label, fontsize, DPI) for label in x_labels + y_labels] + [0.0]) / DPI
    # Around the cells: y tick labels, the y sentence label and the colour bar across;
    # x tick labels (vertical), the x sentence label and the title down.
    width = float(np.clip(cell * columns + longest + 2.6, 4.0, MAX_INCHES))
    height = float(np.clip(cell * rows + longest + 1.4 + (0.6 if title else 0.0), 3.0, MAX_INCHES))

    figure = Figure(figsize=(width, height), dpi=DPI, layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    image = axes.imshow(attention, cmap="viridis", vmin=0.0, vmax=1.0, aspect="auto", interpolation="nearest")
    axes.set_xticks(range(len(x_labels)), labels=x_labels, rotation=90, fontsize=fontsize, parse_math=False)
    axes.set_yticks(range(len(y_labels)), labels=y_labels, fontsize=fontsize, parse_math=False)
    colorbar = figure.colorbar(image, ax=axes, fraction=0.05, pad=0.02, ticks=[0.0, 0.25, 0.5, 0.75, 1.0])
    colorbar.set_label("attention weight", fontsize=MAX_FONTSIZE)

    if title:
        figure.suptitle(fit_text(title, (width - 2 * MARGIN_INCHES) * DPI, MAX_FONTSIZE + 1, DPI, 2),
                        fontsize=MAX_FONTSIZE + 1, parse_math=False)
    _fit_sentence_labels(figure, axes, f"source: {source}" if source else "source",
                         f"translation: {target}" if target else "translation")
    return figure


def _fit_sentence_labels(figure, axes, x_text, y_text):
    """Sets the axis labels, wrapped to the heatmap's width and height once the layout is known.

    A label is centred on its side of the heatmap, so no longer than that side it stays inside
    the figure. The layout depends on how many lines the labels take, hence a few rounds.
    """
    x_width, y_width = (figure.get_figwidth() - 4.0) * DPI, (figure.get_figheight() - 3.0) * DPI  # first guess
    for _ in range(4):
        x_label = fit_text(x_text, max(x_width, DPI), MAX_FONTSIZE, DPI, SENTENCE_LINES)
        y_label = fit_text(y_text, max(y_width, DPI), MAX_FONTSIZE, DPI, SENTENCE_LINES)
        if (x_label, y_label) == (axes.get_xlabel(), axes.get_ylabel()):
            return
        axes.set_xlabel(x_label, fontsize=MAX_FONTSIZE, parse_math=False)
        axes.set_ylabel(y_label, fontsize=MAX_FONTSIZE, parse_math=False)
        figure.draw_without_rendering()  # runs the constrained layout
        box = axes.get_window_extent()
        x_width, y_width = box.width, box.height


def beam_search_attention_figure(outputs, row=0, source=None, title=None):
    """The heatmap of one sentence of the outputs of an export's `beam_search` signature.

    Args:
      outputs: dict with `attention` `(B, T_tgt, T_src)`, `source_tokens` `(B, T_src)`,
        `target_tokens` `(B, T_tgt)` and `translations` `(B, N)`: tensors from the SavedModel,
        or lists from TF Serving's REST API (columnar `outputs`); tokens padded with "".
      row: which sentence of the batch.
      source: the source sentence, for the x axis label.
      title: optional title.

    Returns:
      `attention_figure` of that sentence and its best translation, padding removed.
    """
    source_tokens = [_text(t) for t in np.asarray(outputs["source_tokens"], dtype=object)[row]]
    target_tokens = [_text(t) for t in np.asarray(outputs["target_tokens"], dtype=object)[row]]
    source_tokens = source_tokens[: sum(1 for t in source_tokens if t)]
    target_tokens = target_tokens[: sum(1 for t in target_tokens if t)]
    attention = np.asarray(outputs["attention"], dtype=np.float32)[row][: len(target_tokens), : len(source_tokens)]
    translation = _text(np.asarray(outputs["translations"], dtype=object)[row][0])
    return attention_figure(attention, source_tokens, target_tokens, source=source, target=translation, title=title)


def _text(value):
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)
