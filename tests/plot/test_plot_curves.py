"""zoo.plot's training curves and BLEU-by-length figure: the plotted values read back."""

import os
import struct

import numpy as np
import pytest
import tensorflow as tf

from zoo.plot import bleu_by_length_figure, curves_figure, learning_curves_figure, read_scalars, save_figure


def write_scalars(log_dir, points):
    """Writes `(tag, step, value)` points as TensorBoard scalars, as zoo-train does."""
    writer = tf.summary.create_file_writer(log_dir)
    with writer.as_default():
        for tag, step, value in points:
            tf.summary.scalar(tag, value, step=step)
    writer.close()


def workdir_with_logs(root):
    workdir = os.path.join(root, "run")
    write_scalars(os.path.join(workdir, "logs", "train"), [("batch_loss", 50, 2.5), ("batch_loss", 100, 1.5)])
    write_scalars(os.path.join(workdir, "logs", "dev"), [
        ("bleu", 60, 10.0), ("chrf", 60, 20.0), ("exact_match", 60, 0.25),
        ("bleu", 120, 30.0), ("chrf", 120, 40.0), ("exact_match", 120, 0.5),
    ])  # fmt: skip
    return workdir


def test_read_scalars_of_a_resumed_run_keep_its_steps(tmp_path):
    # A run stopped after step 150, resumed from its checkpoint of step 135: it logs 150 again, then 200, and
    # Keras' epoch scalars at the epoch's index (2). The files were shifted by the first one's last step
    # whenever the second held a step at or below it: the loss plotted at 350 and 400, past the run's end.
    log_dir = str(tmp_path / "train")
    write_scalars(log_dir, [("batch_loss", 50, 3.0), ("batch_loss", 100, 2.0), ("batch_loss", 150, 1.8)])
    os.rename(*(os.path.join(log_dir, name) for name in (os.listdir(log_dir)[0], "events.out.tfevents.1.a")))
    write_scalars(log_dir, [("epoch_loss", 2, 1.6), ("batch_loss", 150, 1.7), ("batch_loss", 200, 1.5)])
    os.rename(*(os.path.join(log_dir, name) for name in
                (next(n for n in os.listdir(log_dir) if not n.endswith(".a")), "events.out.tfevents.2.b")))
    steps, values = read_scalars(log_dir)["batch_loss"]
    assert list(steps) == [50, 100, 150, 200] and list(values) == pytest.approx([3.0, 2.0, 1.7, 1.5])
    assert read_scalars(str(tmp_path / "nothing")) == {}


def test_curves_plot_the_recorded_loss_and_dev_scores(tmp_path):
    figure = curves_figure(workdir_with_logs(str(tmp_path)))
    loss_axes, dev_axes = figure.axes
    (loss_line,) = loss_axes.get_lines()
    assert list(loss_line.get_xdata()) == [50, 100] and list(loss_line.get_ydata()) == [2.5, 1.5]
    lines = {line.get_label(): line for line in dev_axes.get_lines()}
    assert sorted(lines) == ["BLEU", "chrF", "exact match (%)"]
    assert list(lines["BLEU"].get_xdata()) == [60, 120] and list(lines["BLEU"].get_ydata()) == [10.0, 30.0]
    assert list(lines["chrF"].get_ydata()) == [20.0, 40.0]
    assert list(lines["exact match (%)"].get_ydata()) == [25.0, 50.0]
    assert loss_axes.get_xlabel() == dev_axes.get_xlabel() == "step"
    assert figure.get_suptitle() == "run"


def test_the_loss_axis_says_what_the_run_s_loss_is_over(tmp_path):
    workdir = workdir_with_logs(str(tmp_path))
    assert curves_figure(workdir).axes[0].get_ylabel() == "cross-entropy per token"  # no config.json
    with open(os.path.join(workdir, "config.json"), "w") as f:
        f.write('{"loss_normalization": "sentences"}')  # the text recipe's
    assert curves_figure(workdir).axes[0].get_ylabel() == "cross-entropy per sentence"


def test_curves_of_a_run_without_records_say_so(tmp_path):
    os.makedirs(tmp_path / "empty" / "logs")
    figure = curves_figure(str(tmp_path / "empty"))
    assert all(not axes.get_lines() for axes in figure.axes)
    assert [axes.texts[0].get_text() for axes in figure.axes] == [
        "no training loss yet (recorded every 50 steps)", "no dev evaluation yet"]
    with pytest.raises(FileNotFoundError, match="expected the workdir of a zoo-train run"):
        curves_figure(str(tmp_path / "missing"))


def test_bleu_by_length_curves_in_the_papers_layout():
    buckets = ["0-10", "10-20", "20+"]
    curves = {"RNNsearch-30": [20.0, 15.0, None], "RNNsearch-50": [21.0, 19.0, 18.0], "RNNenc-50": [15.0, 9.0, 4.0]}
    figure = bleu_by_length_figure(buckets, curves, counts=[5, 4, 1], title="fr-en")
    axes = figure.axes[0]
    lines = {line.get_label(): line for line in axes.get_lines()}
    assert list(lines["RNNsearch-50"].get_ydata()) == [21.0, 19.0, 18.0]
    np.testing.assert_array_equal(lines["RNNsearch-30"].get_ydata(), [20.0, 15.0, np.nan])
    assert list(lines["RNNenc-50"].get_xdata()) == [0, 1, 2]
    # One colour per model, dashed for the shorter training sentences, solid for the longer.
    assert lines["RNNsearch-30"].get_color() == lines["RNNsearch-50"].get_color() != lines["RNNenc-50"].get_color()
    assert lines["RNNsearch-30"].get_linestyle() == "--" and lines["RNNsearch-50"].get_linestyle() == "-"
    assert [label.get_text() for label in axes.get_xticklabels()] == ["0-10\n(5)", "10-20\n(4)", "20+\n(1)"]
    assert axes.get_ylabel() == "BLEU" and axes.get_title() == "fr-en"
    with pytest.raises(ValueError, match="curve 'x' has 2 values; expected one per bucket \\(3\\)"):
        bleu_by_length_figure(buckets, {"x": [1.0, 2.0]})


def test_save_figure_writes_the_figure_at_its_size(tmp_path):
    figure = bleu_by_length_figure(["0-10"], {"a": [1.0]})
    path = save_figure(figure, str(tmp_path / "sub" / "bleu.png"))
    with open(path, "rb") as f:
        header = f.read(24)
    assert header[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", header[16:24]) == (700, 450)  # 7 x 4.5 inches at 100 dpi
    svg = save_figure(figure, str(tmp_path / "bleu.svg"))
    with open(svg, encoding="utf-8") as f:
        assert "<svg" in f.read(2000)


def test_learning_curves_put_each_run_on_one_chart_in_step_order():
    figure = learning_curves_figure({"zoo": [(400, 5.0), (200, 3.0)], "peer": [(100, 1.0), (300, 4.0)]},
                                    title="dev BLEU against steps")
    (axes,) = figure.axes
    lines = {line.get_label(): (list(line.get_xdata()), list(line.get_ydata())) for line in axes.get_lines()}
    assert lines == {"zoo": ([200, 400], [3.0, 5.0]), "peer": ([100, 300], [1.0, 4.0])}
    assert axes.get_xlabel() == "training step" and axes.get_ylabel() == "dev BLEU"


def test_a_run_named_with_a_leading_underscore_keeps_its_legend_entry():
    # matplotlib leaves "_..." labels out of the legend: the curve was drawn, but unnamed.
    figure = learning_curves_figure({"_baseline": [(1, 2.0), (2, 3.0)], "zoo": [(1, 1.0)]})
    assert [text.get_text() for text in figure.axes[0].get_legend().get_texts()] == [" _baseline", "zoo"]
    figure = bleu_by_length_figure(["0-10", "10-20"], {"_old-30": [10.0, 5.0], "new-30": [12.0, 6.0]})
    assert " _old-30" in [text.get_text() for text in figure.axes[0].get_legend().get_texts()]


def test_learning_curves_refuse_no_runs_and_runs_without_points():
    with pytest.raises(ValueError, match="at least one run"):
        learning_curves_figure({})
    with pytest.raises(ValueError, match="run 'peer' must be a non-empty sequence of \\(step, score\\) pairs"):
        learning_curves_figure({"peer": []})
