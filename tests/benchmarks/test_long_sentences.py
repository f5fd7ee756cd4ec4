"""benchmarks/long_sentences.py end to end on a tiny generated corpus: JSON, buckets, figure."""

import json
import os
import random
import subprocess
import sys

import pytest

from zoo.data import write_tsv

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LEXICON = {"le": "the", "chat": "cat", "chien": "dog", "voit": "sees", "petit": "small", "grand": "big",
           "et": "and", "un": "a", "oiseau": "bird", "mange": "eats"}  # fmt: skip
TINY = ("embedding_dim=8", "encoder_units=8", "decoder_units=16", "attention_units=8", "output_units=8",
        "batch_size=8", "warmup_steps=1", "eval_batch_size=32")  # fmt: skip


def sentences(count, longest, seed):
    """Word-for-word pairs of 1 to `longest` words."""
    rng = random.Random(seed)
    pairs = []
    for _ in range(count):
        source = [rng.choice(sorted(LEXICON)) for _ in range(rng.randint(1, longest))]
        pairs.append((" ".join(source), " ".join(LEXICON[w] for w in source)))
    return pairs


@pytest.mark.slow
def test_long_sentences_benchmark_on_a_tiny_corpus(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    train = sentences(120, 14, seed=0)
    test = sentences(30, 20, seed=1)
    write_tsv(str(data / "train.tsv"), train)
    write_tsv(str(data / "dev.tsv"), sentences(20, 14, seed=2))
    write_tsv(str(data / "test.tsv"), test)
    out = tmp_path / "results" / "long.json"
    command = [sys.executable, os.path.join(ROOT, "benchmarks", "long_sentences.py"), f"--data_dir={data}",
               "--presets=bahdanau", "--max_words=6,12", "--train_steps=3", "--dev_sentences=8",
               "--beam_width=2", "--bucket_width=5", "--last_bucket=15", f"--workdir={tmp_path / 'work'}",
               f"--out={out}"] + [f"--set={field}" for field in TINY]  # fmt: skip
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    env["PYTHONPATH"] = os.pathsep.join([ROOT, env.get("PYTHONPATH", "")])
    done = subprocess.run(command, env=env, cwd=str(tmp_path), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]

    report = json.loads(out.read_text())
    assert [b["label"] for b in report["buckets"]] == ["1-5", "6-10", "11-15", "16+"]
    lengths = [len(source.split()) for source, _ in test]
    expected_counts = [sum(lo <= n <= hi for n in lengths) for lo, hi in ((1, 5), (6, 10), (11, 15), (16, 99))]
    assert [b["sentences"] for b in report["buckets"]] == expected_counts
    assert report["sentences"] == {"train": 120, "dev": 8, "test": 30,
                                   "train_6": sum(len(s.split()) <= 6 for s, _ in train),
                                   "train_12": sum(len(s.split()) <= 12 for s, _ in train)}  # fmt: skip
    assert [run["name"] for run in report["runs"]] == ["RNNsearch-6", "RNNsearch-12"]  # colab/03 runs both presets
    for run in report["runs"]:
        assert run["train_steps"] == 3 and run["train_pairs"] == report["sentences"][f"train_{run['max_train_words']}"]
        assert len(run["bleu_by_length"]) == 4
        assert [b is None for b in run["bleu_by_length"]] == [n == 0 for n in expected_counts]
        assert all(0 <= b <= 100 for b in run["bleu_by_length"] if b is not None) and 0 <= run["test_bleu"] <= 100
    assert report["config"]["embedding_dim"] == 8 and report["config"]["source_vocab_size"] == 4000 and report["config"]["max_source_length"] == 400
    assert report["bleu_signature"].startswith("nrefs:1|") and report["budget"]["train_steps"] == 3
    assert report["cpu_minutes_total"] > 0 and all(run["cpu_seconds"] > 0 for run in report["runs"])
    with open(tmp_path / "results" / "long.png", "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    assert "RNNsearch-12: test BLEU" in done.stdout


@pytest.mark.parametrize("flag, message", [
    ("--presets=bahdanau,nosuch", "--presets: unknown preset(s) ['nosuch']; expected some of"),
    ("--max_words=30,0", "--max_words=30,0: expected integers >= 1, e.g. 30,50"),
    ("--max_words=thirty", "--max_words=thirty: expected integers >= 1"),
    # A field whose default is None failed after the first data was written ("NoneType takes no arguments"),
    # a bool took any word but 1/true as false, and 0 steps or beams ran (a training without end, a traceback).
    ("--set=input_feeding=yes", "--set input_feeding=yes: expected true/false (or 1/0) for input_feeding"),
    ("--set=decoder_layers=two", "--set decoder_layers=two: expected an int for decoder_layers"),
    ("--set=nosuch=1", "--set nosuch=1: the text recipe has no field 'nosuch'"),
    ("--train_steps=0", "flag --train_steps=0: 0 is not"),
    ("--beam_width=0", "flag --beam_width=0: 0 is not"),
])
def test_a_bad_preset_or_length_is_named_before_any_work(flag, message, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    for name in ("train.tsv", "dev.tsv", "test.tsv"):
        write_tsv(str(data / name), sentences(5, 4, seed=0))
    command = [sys.executable, os.path.join(ROOT, "benchmarks", "long_sentences.py"), f"--data_dir={data}",
               f"--workdir={tmp_path / 'work'}", flag]
    finished = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, timeout=300,
                              env=dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="3"))
    assert finished.returncode != 0 and "Traceback" not in finished.stderr
    assert message in "\n".join(finished.stderr.strip().splitlines()[-2:])  # absl's bound checks add a line
    assert not (tmp_path / "work").exists()
