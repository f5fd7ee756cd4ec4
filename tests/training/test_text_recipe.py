"""The `text` recipe's subwords: SentencePiece by default end to end, shared vocabularies, BPE, token batches."""

import json
import logging
import os

import pytest
import tensorflow as tf
from test_trainer import TINY

from recipes import load_config, train_and_export
from zoo.data import (
    UNK_ID,
    SentencePieceTokenizer,
    WordTokenizer,
    dates_splits,
    default_bucket_boundaries,
    write_tsv,
)
from zoo.inference import load_translate_fn
from zoo.training import build_tokenizers
from zoo.training.inputs import make_train_dataset

# The dates task's model sizes and schedule, on the text recipe's TSV files and tokenizers.
TEXT_TINY = dict({k: v for k, v in TINY.items() if not k.startswith("dates_")}, precision="float32")
UNSEEN = "Ωμέγα ß 👍 中文"  # characters no training text has: byte pieces, not <unk>


def text_config(tmp_path, pairs=200, **overrides):
    splits = dates_splits(seed=0, train=pairs, dev=12, test=1)
    train_tsv = write_tsv(str(tmp_path / "train.tsv"), splits["train"])
    dev_tsv = write_tsv(str(tmp_path / "dev.tsv"), splits["dev"])
    config = load_config("text")
    config.update(dict(TEXT_TINY, train_tsv=train_tsv, dev_tsv=dev_tsv, **overrides))
    return config, splits


def saved_config(vocab_dir, side):
    with open(os.path.join(vocab_dir, side, "tokenizer.json"), encoding="utf-8") as f:
        return json.load(f)


def test_the_text_recipe_trains_subwords_end_to_end_and_never_writes_unk(tmp_path, caplog):
    config, splits = text_config(tmp_path, train_steps=2, steps_per_epoch=2, num_epochs=1)
    assert (config.source_tokenizer, config.target_tokenizer, config.spm_model_type) == (
        "sentencepiece", "sentencepiece", "unigram")
    assert config.source_vocab_size == config.target_vocab_size == 8000 and config.spm_byte_fallback
    workdir = str(tmp_path / "run")
    with caplog.at_level(logging.WARNING, logger="zoo.data.sentencepiece_model"):
        results = train_and_export(config, workdir, print_fn=lambda line: None)
    # 200 short pairs cannot fill 8000 pieces: a smaller vocabulary per side, one warning each.
    too_small = [r.getMessage() for r in caplog.records if "too small for vocab_size=8000" in r.getMessage()]
    assert len(too_small) == 2, too_small
    assert results["recipe"] == "text" and results["train_steps"] == 2 and results.get("export_error") is None
    vocab_dir = os.path.join(workdir, "vocab")
    for side in ("source", "target"):
        saved = saved_config(vocab_dir, side)
        assert saved["type"] == "sentencepiece" and saved["model_type"] == "unigram" and saved["byte_fallback"]
        assert 300 < saved["vocab_size"] < 8000  # 4 reserved + 256 byte pieces + what the corpus allows
        assert os.path.isfile(os.path.join(vocab_dir, side, "sentencepiece.model"))
    sources = [source for source, _ in splits["dev"]] + [UNSEEN, f"{UNSEEN} 12/05/1999"]
    translate, _ = load_translate_fn(results["export_path"], beam_width=2)
    hypotheses = [text.decode("utf-8", "replace") for text in translate([s.encode("utf-8") for s in sources])]
    assert len(hypotheses) == len(sources)
    assert not [h for h in hypotheses if "<unk>" in h], hypotheses


def test_a_shared_vocabulary_serves_both_sides_and_reloads_as_one(tmp_path):
    # Upper-case targets: letters only the target side has, <unk> without byte fallback unless shared.
    pairs = [(source, source.upper()) for source, _ in dates_splits(seed=0, train=200, dev=1, test=1)["train"]]
    target_only = tf.constant(["SEPTEMBER OCTOBER"])
    config, _ = text_config(tmp_path, source_tokenizer="sentencepiece", target_tokenizer="sentencepiece",
                            spm_model_type="bpe", spm_byte_fallback=False, source_vocab_size=200, target_vocab_size=200)
    separate, _ = build_tokenizers(config, pairs, str(tmp_path / "separate"), show_progress=False)
    assert UNK_ID in separate.encode(target_only).flat_values.numpy()
    config.shared_vocab = True
    vocab_dir = str(tmp_path / "shared")
    source, target = build_tokenizers(config, pairs, vocab_dir, show_progress=False)
    assert source is target and isinstance(source, SentencePieceTokenizer)
    assert UNK_ID not in source.encode(target_only).flat_values.numpy()
    assert saved_config(vocab_dir, "source") == saved_config(vocab_dir, "target")
    assert saved_config(vocab_dir, "source")["model_type"] == "bpe"
    reloaded = build_tokenizers(config, [], vocab_dir)
    assert reloaded[0] is reloaded[1] and reloaded[0].vocab == source.vocab


def test_word_and_char_stay_one_field_away(tmp_path):
    config, splits = text_config(tmp_path, source_tokenizer="word", target_tokenizer="char", vocab_min_count=2)
    source, target = build_tokenizers(config, splits["train"], str(tmp_path / "vocab"), show_progress=False)
    assert isinstance(source, WordTokenizer) and target.kind == "char"
    words = {word for text, _ in splits["train"] for word in text.split()}
    assert source.vocab_size < len(words) + 4  # vocab_min_count=2 left the single words out
    config.source_tokenizer = "sentencepiece"  # a workdir's vocabulary stays what it was trained with
    with pytest.raises(ValueError, match=r"holds a word tokenizer, not the sentencepiece of source_tokenizer"):
        build_tokenizers(config, [], str(tmp_path / "vocab"))


def test_batch_tokens_batches_hold_about_n_target_tokens(tmp_path):
    config, splits = text_config(tmp_path, source_tokenizer="char", target_tokenizer="char", max_source_length=40,
                                 max_target_length=40, batch_tokens=256)
    pairs = [(source, source) for source, _ in dates_splits(seed=0, train=600, dev=1, test=1)["train"]]
    tokenizers = build_tokenizers(config, pairs, str(tmp_path / "vocab"), show_progress=False)
    batches = list(make_train_dataset(config, pairs, *tokenizers, seed=0))
    assert sum(int(tf.shape(target_out)[0]) for _, target_out in batches) == 600  # every pair, once
    for (source_ids, _), target_out in batches:  # rows x the longer side's padded length
        assert target_out.shape[0] * max(source_ids.shape[1], target_out.shape[1]) <= 256
    # Targets as long as their sources (+ </s>): each full batch holds nearly 256 real target
    # tokens; only the last, partial batch of each length bucket holds fewer.
    real = [int(tf.math.count_nonzero(target_out)) for _, target_out in batches]
    buckets = len(default_bucket_boundaries(40, 40)) + 1
    assert sum(count < 0.7 * 256 for count in real) <= buckets, real


def test_a_sentencepiece_size_too_small_for_the_corpus_names_its_side(tmp_path):
    letters = "".join(chr(code) for code in range(0x410, 0x410 + 120))  # 120 characters on the target side
    pairs = [("a b c", letters[i:] + letters[:i]) for i in range(50)]
    config, _ = text_config(tmp_path, source_vocab_size=300, target_vocab_size=300)
    with pytest.raises(ValueError, match=r"^target vocabulary \(target_vocab_size=300\): vocab_size=300 is too "
                                         r"small for this corpus: .* need 381 pieces"):
        build_tokenizers(config, pairs, str(tmp_path / "vocab"), show_progress=False)


def test_a_target_vocabulary_that_fails_leaves_no_source_vocabulary_behind(tmp_path):
    config, splits = text_config(tmp_path, source_tokenizer="word", target_tokenizer="sentencepiece",
                                 spm_byte_fallback=False, target_vocab_size=8)
    vocab_dir = str(tmp_path / "vocab")
    with pytest.raises(ValueError, match=r"target vocabulary \(target_vocab_size=8\): vocab_size=8 is too small"):
        build_tokenizers(config, splits["train"], vocab_dir, show_progress=False)
    assert not os.path.exists(vocab_dir)  # nothing a rerun would refuse or reuse
    config.target_vocab_size = 40  # the corrected rerun builds both sides
    source, target = build_tokenizers(config, splits["train"], vocab_dir, show_progress=False)
    assert isinstance(source, WordTokenizer) and isinstance(target, SentencePieceTokenizer)
    assert sorted(os.listdir(vocab_dir)) == ["source", "target"]
