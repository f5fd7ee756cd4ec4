"""`stream_train`: zoo-train reads a large training TSV as a stream, its vocabulary built on a sample."""

import json
import os

import pytest
import tensorflow as tf
from test_text_recipe import text_config
from test_trainer import tiny_config

from recipes import train_and_export
from zoo.data import DataError
from zoo.data.tsv_stream import TsvScan, scan_tsv
from zoo.training import build_tokenizers, inputs, streaming
from zoo.training.inputs import load_data, make_train_dataset
from zoo.config_checks import validate_config

CHARS = dict(source_tokenizer="char", target_tokenizer="char", source_vocab_size=0, target_vocab_size=0)


def test_a_streamed_training_file_trains_on_the_stream_and_a_vocabulary_of_its_sample(tmp_path, monkeypatch):
    config, splits = text_config(tmp_path, stream_train="true", stream_sample_size=20, train_steps=2,
                                 steps_per_epoch=0, num_epochs=1, export=False, shortlist_k=2, **CHARS)
    streamed = []
    real_stream = inputs.stream_tsv_dataset
    monkeypatch.setattr(inputs, "stream_tsv_dataset", lambda path, *a, **k: streamed.append(path) or real_stream(
        path, *a, **k))
    lines, workdir = [], str(tmp_path / "run")
    results = train_and_export(config, workdir, print_fn=lines.append)
    assert streamed == [config.train_tsv]  # the training batches came from the file, read as a stream
    assert results["train_steps"] == 2 and results["train_tokens_per_second"] > 0
    with open(os.path.join(workdir, "results.json"), encoding="utf-8") as f:
        assert json.load(f)["train_steps"] == 2
    data_line = next(line for line in lines if line.startswith("  data:"))
    assert f"200 training pairs streamed from {config.train_tsv}, not held in memory (~" in data_line, data_line
    assert "a sample of 20 pairs" in data_line
    # The vocabulary is the one of the scan's sample (seeded by config.seed), not of every pair.
    sample = scan_tsv(config.train_tsv, sample_size=20, seed=config.seed).sample
    expected = build_tokenizers(config, sample, str(tmp_path / "sample_vocab"), show_progress=False)
    everything = build_tokenizers(config, splits["train"], str(tmp_path / "full_vocab"), show_progress=False)
    trained = build_tokenizers(config, [], os.path.join(workdir, "vocab"))
    assert [t.vocab for t in trained] == [t.vocab for t in expected]
    assert trained[0].vocab_size < everything[0].vocab_size
    # The shortlist too is learned from the sample (the stream is not held in memory).
    assert os.path.isfile(os.path.join(workdir, "vocab", "shortlist.npz"))


def test_auto_streams_a_training_file_over_the_threshold(tmp_path, monkeypatch):
    config, splits = text_config(tmp_path, pairs=50, stream_sample_size=10, **CHARS)
    assert config.stream_train == "auto" and not streaming.streams(config)
    assert isinstance(load_data(config)["train"], list)  # a small file stays in memory
    monkeypatch.setattr(streaming, "STREAM_THRESHOLD_BYTES", os.path.getsize(config.train_tsv) - 1)
    assert streaming.streams(config)
    data = load_data(config)
    scan = data["train"]
    assert isinstance(scan, TsvScan) and scan.num_pairs == 50 and len(scan.sample) == 10
    assert data["dev"] == [tuple(pair) for pair in splits["dev"]]
    config.stream_train = "false"
    assert not streaming.streams(config)
    # Static shapes stream too: full batches of batch_size, padded to the bucket's lengths.
    config.update(stream_train="auto", max_source_length=40, max_target_length=40, batch_size=4)
    tokenizers = build_tokenizers(config, scan, str(tmp_path / "vocab"), show_progress=False)
    batches = list(make_train_dataset(config, scan, *tokenizers, seed=0, static_shapes=True))
    assert batches and all(int(tf.shape(target_out)[0]) == 4 for _, target_out in batches)


def test_bad_stream_settings_are_refused_before_training(tmp_path):
    config, _ = text_config(tmp_path, **CHARS)
    for field, value, expected in (
        ("stream_train", "maybe", r"stream_train='maybe' \(expected 'auto', 'true' or 'false'\)"),
        ("stream_sample_size", 0, r"stream_sample_size=0 \(expected >= 1\)"),
        ("shuffle_buffer_size", -1, r"shuffle_buffer_size=-1 \(expected >= 0\)"),
    ):
        bad = config.copy_and_resolve_references()
        bad[field] = value
        with pytest.raises(ValueError, match=expected):
            validate_config(bad)
    dates = tiny_config(stream_train="true")
    with pytest.raises(ValueError, match=r"stream_train='true' \(expected 'auto' or 'false' with dataset 'dates': "
                                         r"only dataset 'tsv' streams its training file\)"):
        validate_config(dates)
    dates.stream_train = "auto"  # never streams another dataset
    validate_config(dates)
    assert not streaming.streams(dates)
    config.update(stream_train="true", dev_tsv="")
    with pytest.raises(DataError, match=r"a stream holds no dev pairs out; expected --dev_tsv, or stream_train=false"):
        load_data(config)
