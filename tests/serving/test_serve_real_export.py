"""zoo-serve and the client with a real zoo export (not the fixture): the answers are the export's own."""

import concurrent.futures
import sys

import numpy as np
import pytest
import tensorflow as tf

from export.export_test_model import BEAM_WIDTH, LENGTH_PENALTY, TEST_SOURCES, as_str, build_parts, write_export
from rest_servers import zoo_serve_in_thread
from serving.client import TranslationClient
from serving.model_registry import load_version
from serving.warmup import read_warmup_requests, replay_warmup_requests, warmup_file

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


@pytest.fixture
def without_tensorflow_serving(monkeypatch):
    """Makes every `import tensorflow_serving...` fail, as where tensorflow-serving-api is not installed."""
    for name in [n for n in sys.modules if n == "tensorflow_serving" or n.startswith("tensorflow_serving.")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, "tensorflow_serving", None)
    with pytest.raises(ImportError):
        from tensorflow_serving.apis import prediction_log_pb2  # noqa: F401


def test_zoo_serve_replays_every_warmup_request_of_the_export(real_export, without_tensorflow_serving):
    base, _ = real_export
    assert replay_warmup_requests(load_version(base, 1)) == 7


def test_the_warmup_reader_decodes_the_exports_requests(real_export, without_tensorflow_serving):
    base, _ = real_export
    requests = read_warmup_requests(warmup_file(f"{base}/1"))
    warmup_sources = [s.encode() for s in TEST_SOURCES[:2]]  # what write_export gives the export
    assert {name for name, _ in requests} == {"serving_default", "greedy", "beam_search", "score", "sample"}
    for name, inputs in requests:
        assert inputs["source"].dtype == object and inputs["source"].tolist() in (warmup_sources, warmup_sources[-1:])
        if name == "beam_search":
            assert inputs["beam_width"].dtype == np.int32 and inputs["beam_width"].shape == ()
            assert int(inputs["beam_width"]) == BEAM_WIDTH and int(inputs["num_hypotheses"]) == 1
            assert inputs["length_penalty"] == np.float32(LENGTH_PENALTY)
        if name == "score":
            assert inputs["target"].tolist() == inputs["source"].tolist()
        if name == "sample":  # a scalar request and one with a value per sentence
            assert inputs["seed"].dtype == np.int32 and inputs["seed"].shape in ((), (2,))
            assert inputs["temperature"].dtype == np.float32 and inputs["top_k"].dtype == np.int32


def test_the_warmup_reader_agrees_with_tf_servings_own_protos(real_export):
    from tensorflow_serving.apis import prediction_log_pb2  # the test extra installs it
    base, _ = real_export
    path = warmup_file(f"{base}/1")
    expected = []
    for record in tf.data.TFRecordDataset(path).as_numpy_iterator():
        request = prediction_log_pb2.PredictionLog.FromString(record).predict_log.request
        expected.append((request.model_spec.signature_name, {k: tf.make_ndarray(v) for k, v in request.inputs.items()}))
    ours = read_warmup_requests(path)
    assert [name for name, _ in ours] == [name for name, _ in expected]
    for (_, mine), (_, theirs) in zip(ours, expected):
        assert sorted(mine) == sorted(theirs)
        for key in mine:
            np.testing.assert_array_equal(mine[key], theirs[key])
            assert mine[key].dtype == theirs[key].dtype


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


def test_concurrent_beam_search_requests_get_the_answers_of_separate_calls(client, real_export):
    _, loaded = real_export
    sources = TEST_SOURCES + ODD + ["1 mai", "2 mai", "12 mai 2021", "4 avril"]
    params = {"beam_width": 3, "num_hypotheses": 2, "length_penalty": 0.6}

    def ask(source):
        return client.predict("beam_search", {"source": [source], **params})

    with concurrent.futures.ThreadPoolExecutor(len(sources)) as pool:
        answers = list(pool.map(ask, sources))
    for source, outputs in zip(sources, answers):
        alone = loaded.signatures["beam_search"](
            source=tf.constant([source]), beam_width=tf.constant(3), num_hypotheses=tf.constant(2),
            length_penalty=tf.constant(0.6),
        )
        assert outputs["translations"] == [as_str(alone["translations"][0])], source
        assert outputs["source_tokens"] == [as_str(alone["source_tokens"][0])], source
        assert outputs["target_tokens"] == [as_str(alone["target_tokens"][0])], source
        assert np.array(outputs["attention"]).shape == tuple(alone["attention"].shape), source
        np.testing.assert_allclose(outputs["attention"], alone["attention"].numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(outputs["log_probs"], alone["log_probs"].numpy(), rtol=1e-5, atol=1e-5)


def test_client_sample_answers_the_exports_sample(client, real_export):
    _, loaded = real_export
    sources = TEST_SOURCES + ODD
    seeds = list(range(len(sources)))
    drawn = client.sample(sources, temperature=1.5, top_k=0, seed=seeds)
    reference = loaded.signatures["sample"](
        source=tf.constant(sources), temperature=tf.constant(1.5), top_k=tf.constant(0), seed=tf.constant(seeds)
    )
    assert [s.text for s in drawn] == as_str(reference["translation"])
    np.testing.assert_allclose([s.log_prob for s in drawn], reference["log_prob"].numpy(), rtol=1e-5, atol=1e-5)
    assert client.sample(sources[0], temperature=1.5, seed=0).text == drawn[0].text


def test_rest_row_format_carries_per_instance_parameters(client, real_export):
    """Row format: each instance its own beam width, hypotheses, penalty; each answer as if alone."""
    _, loaded = real_export
    instances = [
        {"source": "3 mars 2021", "beam_width": 1, "num_hypotheses": 1, "length_penalty": 0.6},
        {"source": "le 4 avril 1999", "beam_width": 4, "num_hypotheses": 2, "length_penalty": 0.0},
        {"source": "7 mai", "beam_width": 3, "num_hypotheses": 2, "length_penalty": 1.0},
    ]
    answer = client._request("POST", ":predict", {"signature_name": "beam_search", "instances": instances})
    for instance, prediction in zip(instances, answer["predictions"]):
        alone = loaded.signatures["beam_search"](
            source=tf.constant([instance["source"]]), beam_width=tf.constant(instance["beam_width"]),
            num_hypotheses=tf.constant(instance["num_hypotheses"]),
            length_penalty=tf.constant(instance["length_penalty"]),
        )
        n = instance["num_hypotheses"]
        assert prediction["translations"][:n] == as_str(alone["translations"][0])
        assert prediction["translations"][n:] == [""] * (2 - n)
    samples = [{"source": "7 mai", "temperature": 2.0, "top_k": 0, "seed": seed} for seed in range(4)]
    answer = client._request("POST", ":predict", {"signature_name": "sample", "instances": samples})
    reference = loaded.signatures["sample"](
        source=tf.constant(["7 mai"] * 4), temperature=tf.constant(2.0), top_k=tf.constant(0),
        seed=tf.constant([0, 1, 2, 3]),
    )
    assert [p["translation"] for p in answer["predictions"]] == as_str(reference["translation"])


def test_concurrent_per_example_requests_get_the_answers_of_separate_calls(client, real_export):
    """zoo-serve batches requests with (B,) parameters; each answer is still its own call's."""
    _, loaded = real_export
    sources = TEST_SOURCES + ["1 mai", "2 mai", "12 mai 2021"]

    def ask(i):
        params = {"beam_width": [2 + i % 2], "num_hypotheses": [1 + i % 2], "length_penalty": [0.6]}
        beams = client.predict("beam_search", {"source": [sources[i]], **params})
        drawn = client.predict("sample", {"source": [sources[i]], "temperature": [1.5], "top_k": [0], "seed": [i]})
        return params, beams, drawn

    with concurrent.futures.ThreadPoolExecutor(len(sources)) as pool:
        answers = list(pool.map(ask, range(len(sources))))
    for i, (params, beams, drawn) in enumerate(answers):
        alone = loaded.signatures["beam_search"](
            source=tf.constant([sources[i]]), **{k: tf.constant(v) for k, v in params.items()}
        )
        assert beams["translations"] == [as_str(alone["translations"][0])], sources[i]
        sampled = loaded.signatures["sample"](
            source=tf.constant([sources[i]]), temperature=tf.constant(1.5), top_k=tf.constant(0), seed=tf.constant(i)
        )
        assert drawn["translation"] == as_str(sampled["translation"]), sources[i]
