"""zoo.plot's attention heatmap: tokens on the axes, the plotted weights, labels inside the figure."""

import numpy as np
import pytest

from zoo.plot import attention_figure, beam_search_attention_figure, fit_text, readable_tokens, save_figure
from zoo.plot.labels import text_width

SOURCE = ("Ce paquet fournit les fichiers de développement pour la bibliothèque libfoo , qui permet de lire et "
          "d' écrire des fichiers au format bar utilisé par de nombreux logiciels de traitement de texte et de "
          "mise en page , ainsi que la documentation complète de l' interface de programmation")
TARGET = ("This package provides the development files for the libfoo library , which can read and write "
          "files in the bar format used by many word processing and desktop publishing programs , and the "
          "complete documentation of its programming interface")


def weights(rows, columns, seed=0):
    return np.random.default_rng(seed).dirichlet(np.ones(columns), size=rows).astype(np.float32)


def texts(labels):
    return [label.get_text() for label in labels]


def test_readable_tokens_of_each_tokenizer():
    # SentencePiece: the word-start mark goes, pieces inside a word get a leading dot.
    assert readable_tokens(["▁Bon", "jour", "▁le", "▁monde", ",", "▁", "</s>"]) == [
        "Bon", "·jour", "le", "monde", "·,", "␣", "</s>"]
    assert readable_tokens(["▁l", "<0x27>", "▁", "<0xC3>"]) == ["l", "·'", "␣", "·<0xC3>"]  # byte fallback pieces
    # The word tokenizer's joiner becomes a dot on its side; bytes are decoded.
    assert readable_tokens([b"l", "\uffed\u2019\uffed", "homme", "\uffed,", "03", "\uffed.", "<unk>"]) == [
        "l", "·\u2019·", "homme", "·,", "03", "·.", "<unk>"]
    # The char tokenizer: one-character tokens, its space "▁" shown as a visible space.
    assert readable_tokens(["3", "▁", "m", "a", "r", "s"]) == ["3", "␣", "m", "a", "r", "s"]
    assert readable_tokens(["x" * 30]) == ["x" * 19 + "…"]


def test_fit_text_wraps_within_the_width_and_cuts_with_an_ellipsis():
    assert fit_text("a short line", 500, 10, 100) == "a short line"
    wrapped = fit_text(SOURCE, 300, 10, 100, max_lines=3)
    lines = wrapped.split("\n")
    assert len(lines) == 3 and lines[-1].endswith("…")
    assert all(text_width(line, 10, 100) <= 300 for line in lines)
    assert " ".join(lines)[:-1].split()[:5] == SOURCE.split()[:5]  # the sentence's own words, in order
    # A word wider than a line is cut too.
    assert all(text_width(line, 10, 100) <= 60 for line in fit_text("x" * 80, 60, 10, 100).split("\n"))


def test_heatmap_shows_the_tokens_and_the_weights():
    source_tokens, target_tokens = ["▁Bon", "jour", "▁!"], ["▁Hello", "▁!", "</s>"]
    attention = weights(3, 3)
    figure = attention_figure(attention, source_tokens, target_tokens, source="Bonjour !", target="Hello !")
    axes = figure.axes[0]
    assert texts(axes.get_xticklabels()) == ["Bon", "·jour", "!"]
    assert texts(axes.get_yticklabels()) == ["Hello", "!", "</s>"]
    assert list(axes.get_xticks()) == [0, 1, 2] and list(axes.get_yticks()) == [0, 1, 2]
    image = axes.images[0]
    np.testing.assert_array_equal(np.asarray(image.get_array()), attention)
    assert image.get_clim() == (0.0, 1.0)  # one colour scale for every model
    assert axes.get_xlabel() == "source: Bonjour !" and axes.get_ylabel() == "translation: Hello !"
    colorbar_axes = figure.axes[1]
    assert colorbar_axes.get_ylabel() == "attention weight"
    assert texts(colorbar_axes.get_yticklabels()) == ["0.00", "0.25", "0.50", "0.75", "1.00"]


def test_heatmap_refuses_weights_of_the_wrong_shape():
    with pytest.raises(ValueError, match=r"\(2, 3\), got \(3, 2\)"):
        attention_figure(weights(3, 2), ["a", "b", "c"], ["x", "y"])


def test_long_sentence_pair_stays_inside_the_figure(tmp_path):
    source_tokens, target_tokens = SOURCE.split(), TARGET.split() + ["</s>"]
    figure = attention_figure(weights(len(target_tokens), len(source_tokens)), source_tokens, target_tokens,
                              source=" ".join([SOURCE] * 4), target=" ".join([TARGET] * 4),
                              title=f"{SOURCE} -> {TARGET}")
    short = attention_figure(weights(2, 3), ["a", "b", "c"], ["x", "</s>"])
    assert figure.get_figwidth() > 2 * short.get_figwidth() and figure.get_figheight() > 2 * short.get_figheight()

    save_figure(figure, str(tmp_path / "long.png"))
    renderer = figure.canvas.get_renderer()
    bounds = figure.bbox  # pixels: (0, 0) to (width, height)
    axes, colorbar_axes = figure.axes
    labels = [axes.xaxis.label, axes.yaxis.label, figure._suptitle, colorbar_axes.yaxis.label]
    labels += axes.get_xticklabels() + axes.get_yticklabels() + colorbar_axes.get_yticklabels()
    for label in labels:
        box = label.get_window_extent(renderer)
        assert box.x0 >= bounds.x0 - 0.5 and box.x1 <= bounds.x1 + 0.5, label.get_text()
        assert box.y0 >= bounds.y0 - 0.5 and box.y1 <= bounds.y1 + 0.5, label.get_text()
    # Too long for three lines: wrapped, then cut with an ellipsis; the title takes two.
    for text, start, lines in ((axes.get_xlabel(), "source: Ce paquet", 3),
                               (axes.get_ylabel(), "translation: This package", 3),
                               (figure.get_suptitle(), "Ce paquet", 2)):
        assert text.startswith(start) and text.endswith("…") and text.count("\n") == lines - 1, text
    # The labels are no longer than the heatmap's sides.
    heatmap = axes.get_window_extent(renderer)
    assert axes.xaxis.label.get_window_extent(renderer).width <= heatmap.width + 0.5
    assert axes.yaxis.label.get_window_extent(renderer).height <= heatmap.height + 0.5


def test_heatmap_of_beam_search_outputs_drops_the_padding():
    # Columnar REST outputs of a batch of two: the second sentence is the shorter one.
    attention = weights(3, 4)
    outputs = {
        "source_tokens": [["a", "b", "c", "d"], ["x", "y", "", ""]],
        "target_tokens": [["A", "B", "</s>"], ["X", "</s>", ""]],
        "attention": [np.zeros((3, 4)).tolist(), attention.tolist()],
        "translations": [["A B", "A"], ["X", "Y"]],
    }
    figure = beam_search_attention_figure(outputs, row=1, source="x y")
    axes = figure.axes[0]
    assert texts(axes.get_xticklabels()) == ["x", "y"] and texts(axes.get_yticklabels()) == ["X", "</s>"]
    np.testing.assert_array_equal(np.asarray(axes.images[0].get_array()), attention[:2, :2])
    assert axes.get_xlabel() == "source: x y" and axes.get_ylabel() == "translation: X"
