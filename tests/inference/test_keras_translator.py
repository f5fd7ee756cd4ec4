"""`KerasTranslator`: what greedy and beam search give for the same batch, in input order, any batch size."""

import numpy as np
import pytest
import tensorflow as tf

from export.export_test_model import TARGET_TEXTS, TEST_SOURCES, as_str, build_parts
from zoo import decoding, metrics
from zoo.inference import KerasTranslator, evaluate

MAX_SOURCE_LENGTH = 24
LENGTH_PENALTY = 0.6


@pytest.fixture(scope="module")
def parts():
    return build_parts()


@pytest.fixture(scope="module")
def translator(parts):
    return KerasTranslator(*parts, max_source_length=MAX_SOURCE_LENGTH, length_penalty=LENGTH_PENALTY)


def searched(parts, search, **options):
    """The best hypotheses of `search` on TEST_SOURCES as one batch, decoded to str."""
    model, source_tokenizer, target_tokenizer = parts
    ids = source_tokenizer.encode(tf.constant(TEST_SOURCES))[:, :MAX_SOURCE_LENGTH].to_tensor()
    return as_str(target_tokenizer.decode(search(model, ids, **options).ids[:, 0, :]))


def test_greedy_and_beam_search_translate_as_the_decoders_do(parts, translator):
    greedy = searched(parts, decoding.greedy_search)
    assert translator.translate(TEST_SOURCES) == greedy
    assert len(set(greedy)) >= 4, f"the test model should translate differently: {greedy}"
    beam = searched(parts, decoding.beam_search, beam_width=3, num_hypotheses=1, length_penalty=LENGTH_PENALTY)
    assert translator.translate(TEST_SOURCES, beam_width=3) == beam
    # Beam search of width 1 on request (as the export's signatures run it), not greedy search.
    beam_one = searched(parts, decoding.beam_search, beam_width=1, num_hypotheses=1, length_penalty=LENGTH_PENALTY)
    assert translator.translate(TEST_SOURCES, beam_width=1, search="beam_search") == beam_one


def test_each_search_runs_the_decoder_it_names(parts, monkeypatch):
    ran = []
    decode = decoding.decode

    def spy(model, source_ids, strategy, **kwargs):
        ran.append((type(strategy).__name__, getattr(strategy, "beam_width", None)))
        return decode(model, source_ids, strategy, **kwargs)

    monkeypatch.setattr(decoding, "decode", spy)
    translator = KerasTranslator(*parts)  # fresh: its searches are traced (and so recorded) below
    translator.translate(TEST_SOURCES)
    translator.translate(TEST_SOURCES, beam_width=1, search="beam_search")
    translator.translate(TEST_SOURCES, beam_width=3)
    translator.translate(TEST_SOURCES, beam_width=3, search="greedy")
    assert ran == [("Greedy", None), ("BeamSearch", 1), ("BeamSearch", 3)]  # greedy traced once


def test_order_and_batch_size_change_nothing(translator):
    expected = translator.translate(TEST_SOURCES, beam_width=2)
    for batch_size in (1, 2, 100):
        assert translator.translate(TEST_SOURCES, beam_width=2, batch_size=batch_size) == expected
    assert translator.translate(TEST_SOURCES[::-1], beam_width=2) == expected[::-1]
    assert translator.translate(["", "   "]) == translator.translate(["", "   "], batch_size=1)
    assert translator.translate([]) == []


def test_attention_is_trimmed_to_the_real_tokens(parts, translator):
    _, source_tokenizer, target_tokenizer = parts
    hypotheses, attentions = translator.translate(TEST_SOURCES, return_attention=True)
    for source, hypothesis, (attention, target_ids) in zip(TEST_SOURCES, hypotheses, attentions):
        source_length = len(source_tokenizer.tokenize(tf.constant([source]))[0])
        assert attention.shape == (len(target_ids), min(source_length, MAX_SOURCE_LENGTH))
        np.testing.assert_allclose(attention.sum(axis=1), 1.0, rtol=1e-5)
        assert as_str(target_tokenizer.decode(tf.constant([target_ids])))[0] == hypothesis


def test_unknown_search_and_bad_beam_width_are_refused(translator):
    with pytest.raises(ValueError, match="search must be 'greedy' or 'beam_search', received 'sampling'"):
        translator.translate(TEST_SOURCES, search="sampling")
    with pytest.raises(ValueError, match="beam_width must be >= 1, received 0"):
        translator.translate(TEST_SOURCES, beam_width=0)


def test_evaluate_scores_the_translations_against_the_references(translator):
    pairs = list(zip(TEST_SOURCES, TARGET_TEXTS))
    scores, hypotheses = evaluate(translator, pairs, beam_width=2, batch_size=2, bleu_tokenize="char")
    assert hypotheses == translator.translate(TEST_SOURCES, beam_width=2)
    expected = metrics.score(hypotheses, [target for _, target in pairs], bleu_tokenize="char")
    assert scores.as_dict() == expected.as_dict()
