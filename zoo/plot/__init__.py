"""Figures of the zoo: attention heatmaps, training curves, BLEU by sentence length, learning curves side by side.

Every function returns a `matplotlib.figure.Figure` with its own Agg canvas (a notebook
shows it inline; `save_figure(figure, path)` writes a file). Nothing here calls
`matplotlib.use` or pyplot, so importing the zoo never changes matplotlib's backend.
"""

from zoo.plot.attention import attention_figure, beam_search_attention_figure
from zoo.plot.bleu_by_length import bleu_by_length_figure
from zoo.plot.curves import curves_figure, learning_curves_figure, read_scalars
from zoo.plot.figure import save_figure
from zoo.plot.labels import fit_text, readable_tokens

__all__ = [
    "attention_figure",
    "beam_search_attention_figure",
    "bleu_by_length_figure",
    "curves_figure",
    "fit_text",
    "learning_curves_figure",
    "read_scalars",
    "readable_tokens",
    "save_figure",
]
