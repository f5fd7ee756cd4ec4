"""Attention heatmaps: which source tokens each target token looked at."""

import matplotlib

matplotlib.use("Agg")  # no display needed: files only

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from zoo.data.word_tokenizer import JOINER  # noqa: E402


def plot_attention(attention, source_tokens, target_tokens, path, title=None):
    """Writes a heatmap of attention weights to an image file.

    Args:
      attention: float array `(T, S)`: row t is the attention of target token t over the
        source tokens.
      source_tokens: list of S str (x tick labels).
      target_tokens: list of T str (y tick labels).
      path: the image file (`.png`).
      title: optional title.

    Returns:
      `path`.
    """
    attention = np.asarray(attention, dtype=np.float32)
    if attention.ndim != 2 or attention.shape != (len(target_tokens), len(source_tokens)):
        raise ValueError(
            f"expected attention of shape (len(target_tokens), len(source_tokens)) = "
            f"({len(target_tokens)}, {len(source_tokens)}), got {attention.shape}"
        )
    # The word tokenizer's joiner mark is not in matplotlib's default font; it only says "no space".
    source_tokens = [token.replace(JOINER, "") or token for token in source_tokens]
    target_tokens = [token.replace(JOINER, "") or token for token in target_tokens]
    width = min(2 + 0.35 * len(source_tokens), 40)
    height = min(1.5 + 0.35 * len(target_tokens), 40)
    figure, axes = plt.subplots(figsize=(width, height))
    try:
        image = axes.imshow(attention, cmap="viridis", vmin=0.0, vmax=max(1e-6, float(attention.max())),
                            aspect="auto")
        axes.set_xticks(range(len(source_tokens)), labels=source_tokens, rotation=90)
        axes.set_yticks(range(len(target_tokens)), labels=target_tokens)
        axes.set_xlabel("source")
        axes.set_ylabel("target")
        if title:
            axes.set_title(title)
        figure.colorbar(image, ax=axes, fraction=0.04)
        figure.tight_layout()
        figure.savefig(path, dpi=100)
    finally:
        plt.close(figure)
    return path
