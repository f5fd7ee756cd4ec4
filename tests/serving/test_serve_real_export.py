"""zoo-serve and the client with a real zoo export (not the fixture): the answers are the export's own."""

import numpy as np
import pytest
import tensorflow as tf

from export.export_test_model import TEST_SOURCES, as_str, build_parts, write_export
from rest_servers import zoo_serve_in_thread
from serving.client import TranslationClient
from serving.model_registry import load_version, replay_warmup_requests

ODD = ["", "   ", "😀 ЖЖ", "3 mars 2021 " * 30]


@pytest.fixture(scope="module")
def real_export(tmp_path_factory):
    base = str(tmp_path_factory.mktemp("real_export"))
    path = write_export(base, build_parts())
    return base, tf.saved_model.load(path)


@pytest.fixture(scope="module")
def client(real_export):
    base, _ = real_export
    with zoo_serve_in_thread(base, "dates", poll_seconds=0) as url:
        with TranslationClient(url, "dates") as client:
            yield client


def test_zoo_serve_replays_every_warmup_request_of_the_export(real_export):
    base, _ = real_export
    assert replay_warmup_requests(load_version(base, 1)) == 5


def test_metadata_shows_the_contract_signatures(client):
    signatures = client.metadata()["metadata"]["signature_def"]["signature_def"]
    # The SavedModel also lists `__saved_model_init_op` (it initializes the vocabulary tables).
    assert set(signatures) >= {"beam_search", "greedy", "score", "serving_default"}
    assert sorted(signatures["beam_search"]["inputs"]) == ["beam_width", "length_penalty", "num_hypotheses", "source"]


def test_translate_score_and_beam_answers_equal_the_export(client, real_export):
    _, loaded = real_export
    sources = TEST_SOURCES + ODD
    expected = loaded.signatures["serving_default"](source=tf.constant(sources))
    answers = client.translate(sources)
    assert [a.text for a in answers] == as_str(expected["translation"])
    np.testing.assert_allclose([a.score for a in answers], expected["score"].numpy(), rtol=1e-5, atol=1e-5)

    greedy = client.translate(sources, signature="greedy")
    assert [a.text for a in greedy] == as_str(loaded.signatures["greedy"](source=tf.constant(sources))["translation"])

    beams = client.translate(sources, beam_width=4, n_best=2, length_penalty=0.6)
    reference = loaded.signatures["beam_search"](
        source=tf.constant(sources), beam_width=tf.constant(4), num_hypotheses=tf.constant(2),
        length_penalty=tf.constant(0.6),
    )
    assert [[h.text for h in t.hypotheses] for t in beams] == [as_str(row) for row in reference["translations"]]

    best = [t.text for t in beams]
    log_probs = client.score(sources, best)
    ended = np.any(reference["target_tokens"].numpy() == b"</s>", axis=1)  # cut ones have no end token
    np.testing.assert_allclose(
        np.array(log_probs)[ended], [t.hypotheses[0].log_prob for t, e in zip(beams, ended) if e], rtol=1e-4, atol=1e-4
    )


def test_beam_search_columnar_answer_has_tokens_and_attention(client):
    outputs = client.predict(
        "beam_search",
        {"source": ["3 mars 2021", "7 mai"], "beam_width": 3, "num_hypotheses": 1, "length_penalty": 0.6},
    )
    attention = np.array(outputs["attention"])
    assert attention.shape == (2, len(outputs["target_tokens"][0]), len(outputs["source_tokens"][0]))
    assert [t for t in outputs["source_tokens"][1] if t] == ["7", "▁", "m", "a", "i"]
