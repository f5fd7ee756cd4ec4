"""Tests of serving.client.TranslationClient: against zoo-serve (and TF Serving when
TF_SERVING_URL is set, see conftest.py), and its retry policy against a scripted transport."""

import json

import httpx
import numpy as np
import pytest

import saved_model_fixture as fixture
from rest_servers import free_port
from serving.client import Hypothesis, Sample, Translation, TranslationClient
from serving.errors import ServingError


@pytest.fixture
def client(rest_server):
    with TranslationClient(rest_server.url, rest_server.model_name, timeout=30, retries=2, backoff=0.05) as client:
        yield client


def test_translate_with_the_default_signature(client):
    sources = ["hello world", "Grüße", ""]
    results = client.translate(sources)
    assert [r.text for r in results] == [fixture.expected_translation(s) for s in sources]
    for result in results:
        assert isinstance(result, Translation) and len(result.hypotheses) == 1
        assert result.score == pytest.approx(fixture.score_of(result.text, 1.0), rel=1e-6)


def test_translate_one_string_returns_one_translation(client):
    result = client.translate("abc", signature="greedy")
    assert isinstance(result, Translation) and result.text == "CBA"
    assert client.translate([]) == []


def test_translate_n_best_uses_beam_search(client):
    results = client.translate(["ab", "hello"], beam_width=4, n_best=3, length_penalty=0.5)
    for source, result in zip(["ab", "hello"], results):
        best = fixture.expected_translation(source)
        texts = [best, best + "~", best + "~~"]
        assert [h.text for h in result.hypotheses] == texts
        assert [h.log_prob for h in result.hypotheses] == pytest.approx([fixture.log_prob_of(t) for t in texts])
        assert [h.score for h in result.hypotheses] == pytest.approx([fixture.score_of(t, 0.5) for t in texts], rel=1e-6)
        assert result.hypotheses[0] == Hypothesis(result.text, result.score, result.hypotheses[0].log_prob)


def test_score_gives_log_probabilities(client):
    targets = ["BA", "anything", ""]
    assert client.score(["ab"] * 3, targets) == pytest.approx([fixture.log_prob_of(t) for t in targets])
    # The contract: score(source, t) equals the log_probs beam search reported for t.
    beam = client.translate("ab", n_best=2)
    assert client.score(["ab", "ab"], [h.text for h in beam.hypotheses]) == pytest.approx(
        [h.log_prob for h in beam.hypotheses]
    )


def test_status_and_metadata(client, rest_server):
    assert {"version": rest_server.version, "state": "AVAILABLE"}.items() <= client.status()["model_version_status"][0].items()
    signatures = client.metadata()["metadata"]["signature_def"]["signature_def"]
    assert {"serving_default", "greedy", "beam_search", "score"} <= set(signatures)


def test_client_errors_carry_the_server_message(client, rest_server):
    with pytest.raises(ServingError) as error:
        client.translate(["a"], signature="no_such_signature")
    assert error.value.status_code == 400 and "no_such_signature" in error.value.message
    with TranslationClient(rest_server.url, "no_such_model", retries=0) as other:
        with pytest.raises(ServingError) as error:
            other.status()
    assert error.value.status_code == 404
    with pytest.raises(ValueError, match="beam_width"):
        client.translate(["a"], beam_width=2, n_best=3)


def _scripted(answers):
    """A transport answering with `answers` in order (a status code or an exception); logs requests."""
    requests = []

    def handler(request):
        requests.append(request)
        answer = answers[min(len(requests), len(answers)) - 1]
        if isinstance(answer, Exception):
            raise answer
        body = {"outputs": {"translation": ["X"], "score": [-1.0]}} if answer == 200 else {"error": f"status {answer}"}
        return httpx.Response(answer, json=body)

    return httpx.MockTransport(handler), requests


def test_retries_5xx_and_connection_errors_then_succeeds():
    transport, requests = _scripted([503, httpx.ConnectError("refused"), httpx.ReadTimeout("slow"), 200])
    with TranslationClient("http://serving.test", retries=3, backoff=0.001, transport=transport) as client:
        assert client.translate("x").text == "X"
    assert len(requests) == 4
    assert requests[0].url.path == "/v1/models/zoo:predict"


def test_gives_up_after_the_retries():
    transport, requests = _scripted([500])
    with TranslationClient("http://serving.test", retries=2, backoff=0.001, transport=transport) as client:
        with pytest.raises(ServingError) as error:
            client.translate("x")
    assert error.value.status_code == 500 and error.value.message == "status 500"
    assert len(requests) == 3


@pytest.mark.parametrize("status", [400, 404, 413])
def test_never_retries_4xx(status):
    transport, requests = _scripted([status, 200])
    with TranslationClient("http://serving.test", retries=3, backoff=0.001, transport=transport) as client:
        with pytest.raises(ServingError) as error:
            client.translate("x")
    assert error.value.status_code == status
    assert len(requests) == 1


def test_pinned_version_goes_into_the_url():
    transport, requests = _scripted([200])
    with TranslationClient("http://serving.test/", "m", version=3, transport=transport) as client:
        client.translate("x")
    assert str(requests[0].url) == "http://serving.test/v1/models/m/versions/3:predict"


def test_unreachable_server_raises_after_the_retries():
    with TranslationClient(f"http://127.0.0.1:{free_port()}", retries=1, backoff=0.01) as client:
        with pytest.raises(ServingError, match="after 2 attempt"):
            client.status()


def _sampler():
    """A transport answering every `sample` with one text per source; logs the request bodies."""
    bodies = []

    def handler(request):
        bodies.append(json.loads(request.content))
        count = len(bodies[-1]["inputs"]["source"])
        return httpx.Response(200, json={"outputs": {"translation": ["t"] * count, "log_prob": [-1.5] * count}})

    return httpx.MockTransport(handler), bodies


def test_sample_sends_scalars_or_one_value_per_text_and_reads_the_answer():
    transport, bodies = _sampler()
    with TranslationClient("http://serving.test", transport=transport) as client:
        assert client.sample("x", temperature=0.5, top_k=3, seed=7) == Sample("t", -1.5)
        assert client.sample(["a", "a"], seed=[1, 2]) == [Sample("t", -1.5)] * 2
        assert client.sample([]) == []
        with pytest.raises(ValueError, match="one seed or one per text"):
            client.sample(["a", "b"], seed=[1])
    assert bodies == [
        {"signature_name": "sample", "inputs": {"source": ["x"], "temperature": 0.5, "top_k": 3, "seed": 7}},
        {"signature_name": "sample", "inputs": {"source": ["a", "a"], "temperature": 1.0, "top_k": 0, "seed": [1, 2]}},
    ]


def test_sample_takes_numpy_parameters():
    """np.float32(0.5) was 'not iterable' and np.arange(2) seeds 'not JSON serializable'."""
    transport, bodies = _sampler()
    with TranslationClient("http://serving.test", transport=transport) as client:
        assert client.sample("x", temperature=np.float32(0.5), top_k=np.int64(3), seed=np.int32(7)) == Sample("t", -1.5)
        assert client.sample(["a", "a"], temperature=np.array([0.5, 2.0]), seed=np.arange(2)) == [Sample("t", -1.5)] * 2
    assert bodies[0]["inputs"] == {"source": ["x"], "temperature": 0.5, "top_k": 3, "seed": 7}
    assert bodies[1]["inputs"] == {"source": ["a", "a"], "temperature": [0.5, 2.0], "top_k": 0, "seed": [0, 1]}


def test_non_finite_parameters_are_sent_as_the_json_literals_servers_read():
    bodies = []

    def handler(request):
        bodies.append(request.content)
        return httpx.Response(200, json={"outputs": {"translation": ["t"], "log_prob": [-1.5], "translations": [["t"]],
                                                     "scores": [[-1.0]], "log_probs": [[-1.5]]}})

    with TranslationClient("http://serving.test", transport=httpx.MockTransport(handler)) as client:
        client.sample("x", temperature=float("inf"))
        client.translate("x", beam_width=3, length_penalty=float("nan"))
    assert b'"temperature": Infinity' in bodies[0] and b'"length_penalty": NaN' in bodies[1]


@pytest.mark.parametrize("make, error, words", [
    (lambda: TranslationClient("not a url"), ValueError, "Expected the server's URL"),
    (lambda: TranslationClient("http://x", backoff=-1), ValueError, "a finite backoff >= 0"),
    (lambda: TranslationClient("http://x", timeout=float("nan")), ValueError, "a finite timeout > 0"),
    (lambda: TranslationClient("http://x").translate(b"abc"), TypeError, "got bytes: decode them first"),
    (lambda: TranslationClient("http://x").sample(["a", 3]), TypeError, "got an item of type int"),
    # These failed in Python's words, naming no argument ("'NoneType' object is not iterable", "'<' not supported
    # between instances of 'str' and 'int'"), took a str as a list of its characters or cut 2.5 to a beam of 2.
    (lambda: TranslationClient("http://x").sample(["a"], seed=None), TypeError, "seed must be a number or a list"),
    (lambda: TranslationClient("http://x").sample(["a"] * 3, temperature="hot"), TypeError, "temperature must be"),
    (lambda: TranslationClient("http://x").translate(["a"], beam_width="5"), TypeError, "beam_width must be an int"),
    (lambda: TranslationClient("http://x").translate(["a"], beam_width=2.5), TypeError, "beam_width must be an int"),
    (lambda: TranslationClient("http://x").translate(["a"], n_best=None), TypeError, "n_best must be an integer"),
    (lambda: TranslationClient("http://x").translate("a", n_best=2, length_penalty="x"), TypeError, "length_penalty"),
    # Was sent to the signature without its beam_width, which was silently dropped.
    (lambda: TranslationClient("http://x").translate("a", beam_width=5, signature="serving_default"), ValueError,
     "'serving_default' takes no beam_width; got beam_width=5"),
    (lambda: TranslationClient("http://x").translate("a", beam_width=5, signature="greedy"), ValueError,
     "'greedy' takes no beam_width"),
])
def test_bad_client_arguments_name_what_is_wrong(make, error, words):
    with pytest.raises(error, match=words):
        make()


@pytest.mark.parametrize("sources, targets, words", [
    ("abc", ["x", "y", "z"], "sources must be a sequence of str, got a str"),  # was scored as 3 one-letter sources
    (["abc"], "xyz", "targets must be a sequence of str, got a str"),
    ([b"ab"], ["cd"], "got an item of type bytes"),  # was 'Object of type bytes is not JSON serializable'
])
def test_score_refuses_a_string_for_its_lists(sources, targets, words):
    with TranslationClient("http://serving.test", transport=_scripted([200])[0]) as client:
        with pytest.raises(TypeError, match=words):
            client.score(sources, targets)
