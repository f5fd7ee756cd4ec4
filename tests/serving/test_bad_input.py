"""Malformed and hostile predict bodies: each gets a 4xx with a plain `{"error": ...}` message.

No answer may carry a Python repr, an exception name or a traceback, whatever the body holds.
"""

import json
import re

import httpx
import pytest

from rest_servers import zoo_serve_in_thread
from serving.limits import ServingLimits

_DEEP = 50_000
_HUGE_INT = "9" * 5000  # more digits than Python parses by default
_BIG_INT = "9" * 400  # parses, but fits no int32 and no float
_BEAM = '"signature_name": "beam_search", "inputs": {"source": ["a"], "beam_width": %s, "num_hypotheses": %s, "length_penalty": %s}'

# (id, body, words the message must contain)
MALFORMED = [
    ("empty_body", b"", "JSON Parse error"),
    ("not_json", b"hello", "JSON Parse error"),
    ("truncated", b'{"instances": ["a"', "JSON Parse error"),
    ("not_utf8", b'{"instances": ["\xff"]}', "not UTF-8"),
    ("byte_order_mark", '\ufeff{"instances": ["a"]}'.encode(), "JSON Parse error"),
    ("null", b"null", "expected an object"),
    ("deep_array", b"[" * _DEEP + b"]" * _DEEP, "nested too deeply"),
    ("deep_object", b'{"a":' * _DEEP + b"1" + b"}" * _DEEP, "nested too deeply"),
    ("deep_instance", b'{"instances": ' + b"[" * 600 + b'"a"' + b"]" * 600 + b"}", "nested deeper"),
    ("deep_value_in_instance", b'{"instances": [{"source": ' + b'{"a":' * 600 + b"1" + b"}" * 600 + b"}]}", "expects strings"),
    ("deep_signature_name", b'{"signature_name": ' + b"[" * 600 + b"]" * 600 + b', "instances": ["a"]}', "must be a string"),
    ("huge_integer", b'{"instances": [' + _HUGE_INT.encode() + b"]}", "too many digits"),
    ("big_integer_for_int32", ("{" + _BEAM % (_BIG_INT, 1, 1.0) + "}").encode(), "400 digits"),
    ("big_integer_for_float", ("{" + _BEAM % (3, 1, _BIG_INT) + "}").encode(), "out of range for float"),
    ("int32_overflow", ("{" + _BEAM % (2**31, 1, 1.0) + "}").encode(), "out of range for int32"),
    ("nan_for_int", ("{" + _BEAM % ("NaN", 1, 1.0) + "}").encode(), "expects int32"),
    ("string_for_float", ("{" + _BEAM % (3, 1, '"x"') + "}").encode(), "expects float32"),
    ("instances_object", b'{"instances": {"source": "a"}}', "non-empty list"),
    ("instances_null", b'{"instances": null}', "non-empty list"),
    ("inputs_null", b'{"inputs": null}', "expects strings"),
    ("null_instance", b'{"instances": [null]}', "expects strings"),
    ("number_signature_name", b'{"signature_name": 12, "instances": ["a"]}', "must be a string"),
    ("long_unknown_signature", b'{"signature_name": "' + b"s" * 100_000 + b'", "instances": ["a"]}', "not found"),
    ("rank_2_source", b'{"inputs": {"source": [["a"]]}}', "shape"),
    ("ragged", b'{"inputs": {"source": [["a", "b"], ["c"]]}}', "ragged"),
    ("bad_b64", b'{"instances": [{"b64": "***"}]}', "base64"),
    ("b64_not_string", b'{"instances": [{"b64": 7}]}', "expects strings"),
    ("many_unknown_keys", json.dumps({f"k{i}": i for i in range(1000)}).encode(), "Unexpected key"),
    ("lone_surrogate", b'{"instances": ["\\ud800"]}', "not valid Unicode"),  # valid JSON, no text
    ("lone_surrogate_signature", b'{"signature_name": "\\ud800", "instances": ["a"]}', "not found"),
    ("lone_surrogate_for_int", ("{" + _BEAM % ('"\\ud800"', 1, 1.0) + "}").encode(), "expects int32"),
]

_INTERNALS = re.compile(r"Traceback|File \"|\b[A-Z]\w*(Error|Exception)\b|<\w[\w.]* object at|<class |\{\{node|0x[0-9a-f]{6,}")


@pytest.fixture(scope="module")
def http():
    with httpx.Client(timeout=60) as client:
        yield client


@pytest.mark.parametrize("body,words", [c[1:] for c in MALFORMED], ids=[c[0] for c in MALFORMED])
def test_malformed_body_gets_a_plain_4xx(zoo_serve_server, http, body, words):
    url = f"{zoo_serve_server.model_url}:predict"
    limit = 64 * 1024  # the fixture server's max_request_bytes
    response = http.post(url, content=body)
    if len(body) > limit:
        assert response.status_code == 413, response.text
    else:
        assert 400 <= response.status_code < 500, response.text
        assert words in response.json()["error"], response.text
    assert response.headers["content-type"] == "application/json"
    answer = response.json()
    assert set(answer) == {"error"} and isinstance(answer["error"], str)
    assert not _INTERNALS.search(answer["error"]), answer["error"]
    assert len(answer["error"]) < 1000  # the body is never echoed back whole
    ok = http.post(url, json={"instances": ["ok"]})  # same connection: still serving
    assert ok.status_code == 200 and ok.json()["predictions"][0]["translation"] == "KO"


def test_deep_and_huge_bodies_are_400_below_the_size_limit(fixture_base_path, http):
    # The session server's 64 KiB limit answers 413 for the deep bodies above: check them below a larger one.
    with zoo_serve_in_thread(fixture_base_path, poll_seconds=0, limits=ServingLimits(max_request_bytes=1 << 20)) as url:
        for name, body, words in MALFORMED:
            response = http.post(f"{url}/v1/models/zoo:predict", content=body)
            assert response.status_code == 400, (name, response.text)
            assert words in response.json()["error"] and not _INTERNALS.search(response.json()["error"]), name
