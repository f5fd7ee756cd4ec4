"""A small, real SavedModel with the signatures of docs/contract.md, built with plain TensorFlow.

The REST server and the client are tested against this fixture so that they do not depend on a
trained zoo model. Its "translation" of a sentence is the sentence upper-cased and reversed
character by character (`"ab c"` -> `"C BA"`), so every answer can be predicted exactly in Python
by `expected_translation`. Signatures, input/output names, dtypes and shapes are exactly those of
docs/contract.md, "The SavedModel", so a real `zoo-export` directory can replace it:

| signature | inputs | outputs |
|---|---|---|
| `serving_default`, `greedy` | `source` string (B) | `translation` string (B), `score` float32 (B) |
| `beam_search` | `source` (B), `beam_width` int32 (), `num_hypotheses` int32 (), `length_penalty` float32 () | `translations` (B, N), `scores` (B, N), `log_probs` (B, N), `attention` (B, T_tgt, T_src), `source_tokens` (B, T_src), `target_tokens` (B, T_tgt) |
| `score` | `source` (B), `target` (B) | `log_prob` float32 (B) |

Hypothesis k (0-based) of `beam_search` is the translation followed by `"~"` repeated k times.
Its `log_probs` is `log_prob_of(hypothesis)` = -0.25 * (characters + 1) (the "+ 1" stands for
the end token), which is also what the `score` signature answers for that target, and its
`scores` is `log_probs / (characters + 1) ** length_penalty`. Like the real export, `beam_search`
clamps `beam_width` to [1, 64] and `num_hypotheses` to [1, beam_width], replaces a non-finite
`length_penalty` by its default (1.0 here), and pads `source_tokens` to at least one column.

Run as a script to write a TF Serving model base path: `python saved_model_fixture.py DIR [VERSION]`.
"""

import math
import os
import sys

import numpy as np
import tensorflow as tf

from serving.warmup import MESSAGES, warmup_file
from zoo.constants import DEFAULT_MAX_BEAM_WIDTH

_STRING_BATCH = tf.TensorSpec([None], tf.string)


def expected_translation(text: str) -> str:
    """What the fixture answers for `text`: upper-cased, then reversed by Unicode character."""
    return text.upper()[::-1]


def log_prob_of(target: str) -> float:
    """The fixture's log-probability of `target`: -0.25 per character plus one end token."""
    return -0.25 * (len(target) + 1)


def score_of(target: str, length_penalty: float) -> float:
    """The fixture's ranking score of `target`: log-probability / (length + 1) ** length_penalty."""
    return log_prob_of(target) / math.pow(len(target) + 1, length_penalty)


def _translate(source):
    """(B,) string -> (B,) string: upper-case, then reverse characters (UTF-8 aware)."""
    chars = tf.strings.unicode_split(tf.strings.upper(source, encoding="utf-8"), "UTF-8")
    return tf.strings.reduce_join(tf.reverse(chars, axis=[1]), axis=1)


def _num_chars(text):
    """(B, ...) string -> float32 number of Unicode characters."""
    return tf.cast(tf.strings.length(text, unit="UTF8_CHAR"), tf.float32)


def _log_prob(target):
    return -0.25 * (_num_chars(target) + 1.0)


def _tokens(text, min_width=0):
    """(B,) string -> (B, T) whitespace tokens, padded with empty strings to T >= min_width."""
    tokens = tf.strings.split(text).to_tensor(default_value="")
    return tf.pad(tokens, [[0, 0], [0, tf.maximum(min_width - tf.shape(tokens)[1], 0)]], constant_values="")


class TranslationFixture(tf.Module):
    """tf.Module whose tf.functions are the four serving signatures."""

    @tf.function(input_signature=[_STRING_BATCH])
    def serving_default(self, source):
        translation = _translate(source)
        return {"translation": translation, "score": _log_prob(translation) / (_num_chars(translation) + 1.0)}

    @tf.function(input_signature=[_STRING_BATCH])
    def greedy(self, source):
        translation = _translate(source)
        return {"translation": translation, "score": _log_prob(translation) / (_num_chars(translation) + 1.0)}

    @tf.function(
        input_signature=[
            _STRING_BATCH,
            tf.TensorSpec([], tf.int32),
            tf.TensorSpec([], tf.int32),
            tf.TensorSpec([], tf.float32),
        ]
    )
    def beam_search(self, source, beam_width, num_hypotheses, length_penalty):
        beam_width = tf.clip_by_value(beam_width, 1, DEFAULT_MAX_BEAM_WIDTH)
        num_hypotheses = tf.clip_by_value(num_hypotheses, 1, beam_width)
        length_penalty = tf.where(tf.math.is_finite(length_penalty), length_penalty, 1.0)
        best = _translate(source)  # [batch]
        suffixes = tf.strings.reduce_join(  # [num_hypotheses]: "", "~", "~~", ...
            tf.where(
                tf.sequence_mask(tf.range(num_hypotheses), num_hypotheses),
                tf.fill([num_hypotheses, num_hypotheses], "~"),
                tf.fill([num_hypotheses, num_hypotheses], ""),
            ),
            axis=1,
        )
        translations = best[:, None] + suffixes[None, :]  # [batch, num_hypotheses]
        log_probs = _log_prob(translations)
        scores = log_probs / tf.pow(_num_chars(translations) + 1.0, length_penalty)
        source_tokens = _tokens(source, min_width=1)  # [batch, src_len], src_len >= 1 as in the export
        target_tokens = _tokens(best)  # [batch, tgt_len]
        # Target token j of a sentence attends to the source token it mirrors in that sentence (one-hot
        # rows), zero rows past its own target and zero columns past its own source, as in the export.
        src_lengths = tf.reduce_sum(tf.cast(source_tokens != "", tf.int32), axis=1)  # [batch]
        tgt_lengths = tf.reduce_sum(tf.cast(target_tokens != "", tf.int32), axis=1)  # [batch]
        steps = tf.range(tf.shape(target_tokens)[1])[None, :]  # [1, tgt_len]
        mirrored = src_lengths[:, None] - 1 - steps  # [batch, tgt_len]; -1 and below: no source token
        attention = tf.one_hot(mirrored, tf.shape(source_tokens)[1], dtype=tf.float32)  # zero rows for < 0
        attention *= tf.cast(steps < tgt_lengths[:, None], tf.float32)[:, :, None]
        return {
            "translations": translations,
            "scores": scores,
            "log_probs": log_probs,
            "attention": attention,
            "source_tokens": source_tokens,
            "target_tokens": target_tokens,
        }

    @tf.function(input_signature=[_STRING_BATCH, _STRING_BATCH])
    def score(self, source, target):
        tf.debugging.assert_equal(
            tf.shape(source), tf.shape(target), message="source and target must have the same batch size"
        )
        return {"log_prob": _log_prob(target)}


def write_warmup_requests(export_dir: str, requests: list) -> str:
    """Writes `assets.extra/tf_serving_warmup_requests`, the TFRecord of PredictionLogs TF Serving replays.

    Args:
        export_dir: a SavedModel version directory.
        requests: (signature name, {input name: numpy-convertible value}) pairs.
    """
    path = warmup_file(export_dir)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with tf.io.TFRecordWriter(path) as writer:
        for signature_name, inputs in requests:
            log = MESSAGES["PredictionLog"]()
            request = log.predict_log.request
            request.model_spec.name = "zoo"
            request.model_spec.signature_name = signature_name
            for name, value in inputs.items():
                request.inputs.add(key=name, value=tf.make_tensor_proto(value).SerializeToString())
            writer.write(log.SerializeToString())
    return path


def build_saved_model(model_base_path: str, version: int = 1) -> str:
    """Writes the fixture to `<model_base_path>/<version>/` as TF Serving expects; returns that dir.

    Also writes two warmup requests, as a real export does.
    """
    module = TranslationFixture()
    export_dir = os.path.join(model_base_path, str(version))
    tf.saved_model.save(
        module,
        export_dir,
        signatures={
            "serving_default": module.serving_default,
            "greedy": module.greedy,
            "beam_search": module.beam_search,
            "score": module.score,
        },
    )
    beam_inputs = {"beam_width": np.int32(2), "num_hypotheses": np.int32(2), "length_penalty": np.float32(1.0)}
    write_warmup_requests(
        export_dir,
        [("serving_default", {"source": ["warm up"]}), ("beam_search", {"source": ["warm up"], **beam_inputs})],
    )
    return export_dir


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit(f"usage: {sys.argv[0]} MODEL_BASE_PATH [VERSION]; got {sys.argv[1:]}")
    print(build_saved_model(sys.argv[1], int(sys.argv[2]) if len(sys.argv) == 3 else 1))
