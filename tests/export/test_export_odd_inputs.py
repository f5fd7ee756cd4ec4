"""Odd inputs get an answer (maybe empty) from every signature of the export, never an error."""

import numpy as np
import pytest
import tensorflow as tf

from export_test_model import MAX_SOURCE_LENGTH, TEST_SOURCES, as_str

ODD_INPUTS = {
    "empty": "",
    "whitespace": " \t\u00a0\u3000  ",
    "10x too long": ("3 mars 2021 " * 40)[: 10 * MAX_SOURCE_LENGTH],
    "non-Latin": "٣ مارس ٢٠٢١ 二〇二一年三月三日 Март",
    "emoji": "😀🎉 3 🇫🇷 mars 👍🏽",
    "unknown tokens only": "ЖЖЖ ЩЩ ⊗⊗",
    "control characters": "3\x00 mars\x07\x1b 2021",
    "invalid UTF-8": b"3 mars \xff\xfe 2021",
    "one character": "3",
}


def _check_answers(loaded, sources):
    source = tf.constant(sources)
    size = len(sources)
    for name in ("serving_default", "greedy"):
        out = loaded.signatures[name](source=source)
        assert out["translation"].shape == (size,) and out["score"].shape == (size,), name
        assert np.all(np.isfinite(out["score"].numpy())), name
        as_str(out["translation"])  # valid UTF-8
    beam = loaded.signatures["beam_search"](
        source=source, beam_width=tf.constant(3), num_hypotheses=tf.constant(2), length_penalty=tf.constant(0.6)
    )
    assert beam["translations"].shape == (size, 2)
    for key in ("scores", "log_probs", "attention"):
        assert np.all(np.isfinite(beam[key].numpy())), key
    assert beam["source_tokens"].shape[1] <= MAX_SOURCE_LENGTH
    score = loaded.signatures["score"](source=source, target=beam["translations"][:, 0])["log_prob"]
    assert np.all(np.isfinite(score.numpy()))
    # A hypothesis cut at the length limit has no end token, which `score` always counts.
    ended = np.any(beam["target_tokens"].numpy() == b"</s>", axis=1)
    np.testing.assert_allclose(score.numpy()[ended], beam["log_probs"].numpy()[ended, 0], rtol=1e-4, atol=1e-4)
    return beam


@pytest.mark.parametrize("kind", sorted(ODD_INPUTS))
def test_every_signature_answers(loaded, kind):
    beam = _check_answers(loaded, [ODD_INPUTS[kind]])
    if kind == "10x too long":
        assert beam["source_tokens"].shape == (1, MAX_SOURCE_LENGTH)  # truncated, documented


def test_a_batch_of_every_odd_input_with_normal_ones(loaded):
    sources = list(ODD_INPUTS.values()) + TEST_SOURCES
    beam = _check_answers(loaded, sources)
    # Odd neighbours change nothing for the normal sentences.
    alone = loaded.signatures["serving_default"](source=tf.constant(TEST_SOURCES))
    assert as_str(beam["translations"][len(ODD_INPUTS) :, 0]) == as_str(alone["translation"])


def test_empty_and_whitespace_sources_are_the_same_empty_source(loaded):
    out = loaded.signatures["serving_default"](source=tf.constant(["", "   ", "\t\n"]))
    assert len(set(as_str(out["translation"]))) == 1
    beam = loaded.signatures["beam_search"](
        source=tf.constant([""]), beam_width=tf.constant(2), num_hypotheses=tf.constant(1),
        length_penalty=tf.constant(0.6),
    )
    assert as_str(beam["source_tokens"]) == [""]  # one padding column: the encoder sees no token


def test_unknown_characters_read_as_unk(loaded):
    beam = loaded.signatures["beam_search"](
        source=tf.constant([ODD_INPUTS["unknown tokens only"]]), beam_width=tf.constant(2),
        num_hypotheses=tf.constant(1), length_penalty=tf.constant(0.6),
    )
    tokens = [t for t in as_str(beam["source_tokens"]) if t]
    assert tokens == ["Ж", "Ж", "Ж", "▁", "Щ", "Щ", "▁", "⊗", "⊗"]  # kept as text, encoded as <unk>


def test_an_empty_batch_answers_with_empty_outputs(loaded):
    empty = tf.constant([], tf.string)
    assert loaded.signatures["serving_default"](source=empty)["translation"].shape == (0,)
    assert loaded.signatures["greedy"](source=empty)["score"].shape == (0,)
    beam = loaded.signatures["beam_search"](
        source=empty, beam_width=tf.constant(3), num_hypotheses=tf.constant(2), length_penalty=tf.constant(0.6)
    )
    assert beam["translations"].shape == (0, 2)
    assert loaded.signatures["score"](source=empty, target=empty)["log_prob"].shape == (0,)
