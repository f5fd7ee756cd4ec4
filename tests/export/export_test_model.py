"""Shared helpers of the export tests: a tiny zoo model, its tokenizers, workdirs, subprocesses.

The model is fitted for a few seconds on six toy date pairs: a randomly initialised tiny model
answers the same string (often empty) for every input, which would make equality tests weak.
"""

import json
import os
import subprocess
import sys

import keras
import numpy as np
import tensorflow as tf

from zoo.data import CharTokenizer, SentencePieceTokenizer
from zoo.data.vocabulary import BOS_ID, EOS_ID, PAD_ID
from zoo.decoding import beam_search, greedy_search
from zoo.models import build

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MAX_SOURCE_LENGTH = 24
BEAM_WIDTH = 3
LENGTH_PENALTY = 0.6

SOURCE_TEXTS = ["3 mars 2021", "le 4 avril 1999", "12/05/2020", "1 janvier 2000", "31 déc. 1987", "7 mai"]
TARGET_TEXTS = ["2021-03-03", "1999-04-04", "2020-05-12", "2000-01-01", "1987-12-31", "2000-05-07"]
TEST_SOURCES = ["3 mars 2021", "le 4 avril 1999", "7 mai", "31/12/1987", "2 2"]


TINY_SIZES = {"embedding_dim": 8, "encoder_units": 8, "decoder_units": 8, "attention_units": 8, "output_units": 8,
              "dropout": 0.0}


def tiny_model(source_tokenizer, target_tokenizer, epochs=30, seed=0, preset="bahdanau", dtype=None, sizes=None):
    """A tiny model (Bahdanau unless `preset` says) fitted for a few seconds on the toy pairs (informative outputs).

    `sizes` replaces TINY_SIZES (a preset takes only the sizes it has); `dtype` is the model's policy.
    `seed=None` leaves the random state as it is: seeding clears TensorFlow's eager kernel cache,
    which frees the SentencePiece model of a tokenizer built before (seed first, then build such
    tokenizers).
    """
    if seed is not None:
        keras.utils.set_random_seed(seed)
    model = build(preset, source_tokenizer.vocab_size, target_tokenizer.vocab_size, dtype=dtype,
                  **(TINY_SIZES if sizes is None else sizes))
    if epochs:
        source = source_tokenizer.encode(tf.constant(SOURCE_TEXTS)).to_tensor()
        target = target_tokenizer.encode(tf.constant(TARGET_TEXTS))
        begin = tf.fill([len(TARGET_TEXTS), 1], BOS_ID)
        end = tf.fill([len(TARGET_TEXTS), 1], EOS_ID)
        target_in = tf.concat([begin, target], axis=1).to_tensor()
        target_out = tf.concat([target, end], axis=1).to_tensor()
        model.compile(
            optimizer=keras.optimizers.Adam(0.08),
            loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=PAD_ID),
            jit_compile=False,  # XLA would spend longer compiling than training
        )
        model.fit((source, target_in), target_out, epochs=epochs, batch_size=len(SOURCE_TEXTS), verbose=0)
    return model


def write_workdir(workdir, model, source_tokenizer, target_tokenizer, config):
    """A minimal zoo-train workdir: best.keras, vocab/source, vocab/target, config.json."""
    os.makedirs(workdir, exist_ok=True)
    model.save(os.path.join(workdir, "best.keras"))
    source_tokenizer.save(os.path.join(workdir, "vocab", "source"))
    target_tokenizer.save(os.path.join(workdir, "vocab", "target"))
    with open(os.path.join(workdir, "config.json"), "w", encoding="utf-8") as f:
        json.dump(config, f)
    return workdir


def run_python(code, *args, timeout=240, env=None):
    """Runs `python -c code args...` from the repository root; returns the CompletedProcess."""
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


def as_str(values):
    return [v.decode("utf-8") for v in np.asarray(values).reshape(-1).tolist()]


def reference_ids(source_tokenizer, sources):
    """The source ids the export decodes from: encoded, cut to MAX_SOURCE_LENGTH, padded."""
    return source_tokenizer.encode(tf.constant(sources))[:, :MAX_SOURCE_LENGTH].to_tensor()


def decode_all(target_tokenizer, ids):
    """int32 (B, N, T) -> list (B) of lists (N) of str."""
    b, n, t = ids.shape
    texts = as_str(target_tokenizer.decode(tf.reshape(ids, [-1, t])))
    return [texts[i * n : (i + 1) * n] for i in range(b)]


def assert_close_per_token(actual, desired, lengths, tolerance, per_token):
    """`|actual - desired| <= tolerance * (1 + |desired|) + per_token * lengths`, elementwise: a
    hypothesis' score or log-probability sums one rounding error per token."""
    actual, desired = np.asarray(actual), np.asarray(desired)
    bound = tolerance * (1 + np.abs(desired)) + per_token * np.asarray(lengths, np.float64)
    excess = np.abs(actual - desired) - bound
    assert np.all(excess <= 0), (
        f"export {actual.tolist()} against Keras {desired.tolist()} (lengths {np.asarray(lengths).tolist()}): "
        f"beyond {tolerance} + {per_token} per token by up to {float(excess.max()):.4g}")


def assert_export_matches_keras(loaded, parts, sources, tolerance=1e-5, shortlist=None, per_token=0.0):
    """The export's `serving_default`, `greedy` and `beam_search` against `zoo.decoding` on the
    Keras model (texts, scores, log-probabilities, attention), every output float32; returns the
    beam translations. `tolerance` bounds the numbers' differences (wider for a bfloat16 model);
    `per_token` adds to the bound of a score or log-probability per token of its hypothesis
    (a bfloat16 model's logits are rounded to 8 significant bits at every step, and the export's
    graph rounds them at other places than the Keras model's: its fused kernels differ);
    `shortlist`: the `zoo.decoding.Shortlist` the export was made with, if any."""
    model, source_tokenizer, target_tokenizer = parts
    ids = reference_ids(source_tokenizer, sources)
    source = tf.constant(sources)

    default = loaded.signatures["serving_default"](source=source)
    ref = beam_search(model, ids, beam_width=BEAM_WIDTH, num_hypotheses=1, length_penalty=LENGTH_PENALTY,
                      shortlist=shortlist)
    expected = [hyps[0] for hyps in decode_all(target_tokenizer, ref.ids)]
    assert as_str(default["translation"]) == expected
    assert default["score"].dtype == tf.float32
    assert_close_per_token(default["score"].numpy(), ref.scores[:, 0].numpy(), ref.lengths[:, 0], tolerance, per_token)

    greedy = loaded.signatures["greedy"](source=source)
    ref = greedy_search(model, ids, length_penalty=LENGTH_PENALTY, shortlist=shortlist)
    assert as_str(greedy["translation"]) == [hyps[0] for hyps in decode_all(target_tokenizer, ref.ids)]
    assert_close_per_token(greedy["score"].numpy(), ref.scores[:, 0].numpy(), ref.lengths[:, 0], tolerance, per_token)

    beam = loaded.signatures["beam_search"](
        source=source, beam_width=tf.constant(4), num_hypotheses=tf.constant(3), length_penalty=tf.constant(0.8)
    )
    ref = beam_search(model, ids, beam_width=4, num_hypotheses=3, length_penalty=0.8, shortlist=shortlist)
    assert all(beam[name].dtype == tf.float32 for name in ("scores", "log_probs", "attention"))
    translations = beam["translations"].numpy()
    assert translations.shape == (len(sources), 3)
    assert [as_str(row) for row in translations] == decode_all(target_tokenizer, ref.ids)
    assert_close_per_token(beam["scores"].numpy(), ref.scores.numpy(), ref.lengths, tolerance, per_token)
    assert_close_per_token(beam["log_probs"].numpy(), ref.log_probs.numpy(), ref.lengths, tolerance, per_token)
    target_length = beam["attention"].shape[1]
    assert target_length == int(tf.reduce_max(ref.lengths[:, 0]))
    np.testing.assert_allclose(
        beam["attention"].numpy(), ref.attention[:, 0, :target_length].numpy(), rtol=tolerance,
        atol=tolerance / 10
    )
    return expected


def build_parts():
    """`(model, source_tokenizer, target_tokenizer)`: the tiny fitted model and its tokenizers."""
    source_tokenizer = CharTokenizer.build(SOURCE_TEXTS)
    target_tokenizer = CharTokenizer.build(TARGET_TEXTS)
    return tiny_model(source_tokenizer, target_tokenizer), source_tokenizer, target_tokenizer


def write_export(base, parts, version=None):
    """Exports `parts` to `base/<version>` with the test settings; returns the version dir."""
    from zoo.export import export_saved_model

    return export_saved_model(
        *parts,
        base,
        version,
        beam_width=BEAM_WIDTH,
        length_penalty=LENGTH_PENALTY,
        max_source_length=MAX_SOURCE_LENGTH,
        warmup_sources=TEST_SOURCES[:2],
    )



# Words of several scripts for the SentencePiece corpus: accents, Greek, Cyrillic, CJK, emoji.
MULTILINGUAL_WORDS = ("chat", "maison", "été", "Straße", "über", "γράμμα", "Ελλάδα", "привет", "дела",
                      "日本語", "文章", "👍", "🎉", "mars", "avril", "mai", "janvier", "déc.")


def multilingual_corpus(size=200, seed=0):
    """`size` sentences of 2 to 6 words drawn from MULTILINGUAL_WORDS (deterministic)."""
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(MULTILINGUAL_WORDS, rng.integers(2, 7))) for _ in range(size)]


def build_sentencepiece_parts():
    """`(model, source_tokenizer, target_tokenizer)` with SentencePiece tokenizers (byte fallback).

    The tokenizers are trained on the toy pairs and a generated multilingual corpus (too small
    for the 400 pieces asked: a smaller vocabulary and one warning each), then the tiny model.
    """
    keras.utils.set_random_seed(0)  # before the tokenizers: see `tiny_model`
    corpus = multilingual_corpus()
    source_tokenizer = SentencePieceTokenizer.build(SOURCE_TEXTS * 5 + corpus, max_size=400)
    target_tokenizer = SentencePieceTokenizer.build(TARGET_TEXTS * 5 + corpus, max_size=400)
    return tiny_model(source_tokenizer, target_tokenizer, seed=None), source_tokenizer, target_tokenizer
