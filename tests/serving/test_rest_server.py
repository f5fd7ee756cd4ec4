"""REST tests of zoo-serve (and of a real TF Serving when TF_SERVING_URL is set, see conftest.py).

The served model is `saved_model_fixture`: its answers are known exactly in Python.
"""

import base64
import concurrent.futures
import json
import logging
import os
import shutil
import subprocess
import sys
import time

import httpx
import numpy as np
import pytest

import saved_model_fixture as fixture
from rest_servers import REPO_ROOT, zoo_serve_subprocess
from serving.model_registry import ModelRegistry, load_version
from serving.warmup import replay_warmup_requests, warmup_file
from zoo.constants import saved_model_versions, version_path
from zoo.inference.resolve import resolve_model

SENTENCES = ["hello world", "Grüße aus Köln", "", "a b c"]

BEAM_INPUTS = {"beam_width": 3, "num_hypotheses": 2, "length_penalty": 0.5}


def _predict(client, server, body, version=None):
    url = server.model_url + (f"/versions/{version}" if version else "") + ":predict"
    return client.post(url, content=json.dumps(body).encode("utf-8"), headers={"content-type": "application/json"})


@pytest.fixture
def client():
    with httpx.Client(timeout=30) as http:
        yield http


# ---------------------------------------------------------------------------- status and metadata


def test_model_status(rest_server, client):
    for url in (rest_server.model_url, f"{rest_server.model_url}/versions/{rest_server.version}"):
        response = client.get(url)
        assert response.status_code == 200, response.text
        statuses = response.json()["model_version_status"]
        served = [s for s in statuses if s["state"] == "AVAILABLE"]
        assert served == [
            {"version": rest_server.version, "state": "AVAILABLE", "status": {"error_code": "OK", "error_message": ""}}
        ]
        if rest_server.kind == "zoo-serve":  # KServe's V1 readiness field; TF Serving has none.
            assert response.json()["ready"] is True


def _dims(tensor_info):
    return [int(d["size"]) for d in tensor_info["tensor_shape"].get("dim", [])]


@pytest.mark.parametrize("versioned", [False, True])
def test_metadata_lists_the_contract_signatures(rest_server, client, versioned):
    url = rest_server.model_url + (f"/versions/{rest_server.version}" if versioned else "") + "/metadata"
    response = client.get(url)
    assert response.status_code == 200, response.text
    answer = response.json()
    assert answer["model_spec"] == {"name": rest_server.model_name, "signature_name": "", "version": rest_server.version}
    defs = answer["metadata"]["signature_def"]["signature_def"]
    expected = {
        "serving_default": ({"source": ("DT_STRING", [-1])}, {"translation": ("DT_STRING", [-1]), "score": ("DT_FLOAT", [-1])}),
        "greedy": ({"source": ("DT_STRING", [-1])}, {"translation": ("DT_STRING", [-1]), "score": ("DT_FLOAT", [-1])}),
        "beam_search": (
            {
                "source": ("DT_STRING", [-1]),
                "beam_width": ("DT_INT32", []),
                "num_hypotheses": ("DT_INT32", []),
                "length_penalty": ("DT_FLOAT", []),
            },
            {
                "translations": ("DT_STRING", [-1, -1]),
                "scores": ("DT_FLOAT", [-1, -1]),
                "log_probs": ("DT_FLOAT", [-1, -1]),
                "attention": ("DT_FLOAT", [-1, -1, -1]),
                "source_tokens": ("DT_STRING", [-1, -1]),
                "target_tokens": ("DT_STRING", [-1, -1]),
            },
        ),
        "score": ({"source": ("DT_STRING", [-1]), "target": ("DT_STRING", [-1])}, {"log_prob": ("DT_FLOAT", [-1])}),
    }
    for name, (inputs, outputs) in expected.items():
        signature = defs[name]
        assert signature["method_name"] == "tensorflow/serving/predict"
        assert {k: (v["dtype"], _dims(v)) for k, v in signature["inputs"].items()} == inputs, name
        assert {k: (v["dtype"], _dims(v)) for k, v in signature["outputs"].items()} == outputs, name


# ---------------------------------------------------------------------------------------- predict


def _expected_default(text):
    translation = fixture.expected_translation(text)
    return {"translation": translation, "score": fixture.score_of(translation, 1.0)}


def _assert_default_predictions(predictions, sources):
    assert len(predictions) == len(sources)
    for prediction, source in zip(predictions, sources):
        expected = _expected_default(source)
        assert prediction["translation"] == expected["translation"]
        assert prediction["score"] == pytest.approx(expected["score"], rel=1e-6)


@pytest.mark.parametrize("signature", [None, "serving_default", "greedy"])
def test_predict_row_format_plain_values(rest_server, client, signature):
    body = {"instances": SENTENCES}
    if signature:
        body["signature_name"] = signature
    response = _predict(client, rest_server, body)
    assert response.status_code == 200, response.text
    _assert_default_predictions(response.json()["predictions"], SENTENCES)


def test_predict_row_format_named_inputs_and_version(rest_server, client):
    body = {"instances": [{"source": s} for s in SENTENCES]}
    response = _predict(client, rest_server, body, version=rest_server.version)
    assert response.status_code == 200, response.text
    _assert_default_predictions(response.json()["predictions"], SENTENCES)


@pytest.mark.parametrize("inputs", [{"source": SENTENCES}, SENTENCES], ids=["named", "bare"])
def test_predict_columnar_format(rest_server, client, inputs):
    response = _predict(client, rest_server, {"signature_name": "greedy", "inputs": inputs})
    assert response.status_code == 200, response.text
    outputs = response.json()["outputs"]
    assert outputs["translation"] == [fixture.expected_translation(s) for s in SENTENCES]
    assert len(outputs["score"]) == len(SENTENCES)


def test_predict_binary_input_as_b64(rest_server, client):
    source = {"b64": base64.b64encode("tschüss".encode("utf-8")).decode("ascii")}
    response = _predict(client, rest_server, {"instances": [source]})
    assert response.status_code == 200, response.text
    assert response.json()["predictions"][0]["translation"] == "SSÜHCST"


def test_predict_beam_search_columnar(rest_server, client):
    sources = ["hello world", "ab"]
    body = {"signature_name": "beam_search", "inputs": dict(source=sources, **BEAM_INPUTS)}
    response = _predict(client, rest_server, body)
    assert response.status_code == 200, response.text
    outputs = response.json()["outputs"]
    best = [fixture.expected_translation(s) for s in sources]
    assert outputs["translations"] == [[b, b + "~"] for b in best]
    for row, hypotheses in zip(outputs["log_probs"], outputs["translations"]):
        assert row == pytest.approx([fixture.log_prob_of(h) for h in hypotheses])
    for row, hypotheses in zip(outputs["scores"], outputs["translations"]):
        assert row == pytest.approx([fixture.score_of(h, 0.5) for h in hypotheses], rel=1e-6)
    assert outputs["source_tokens"] == [["hello", "world"], ["ab", ""]]
    assert outputs["target_tokens"] == [["DLROW", "OLLEH"], ["BA", ""]]
    assert np.array(outputs["attention"]).shape == (2, 2, 2)  # (B, T_tgt, T_src)
    assert outputs["attention"][0] == [[0.0, 1.0], [1.0, 0.0]]


@pytest.mark.parametrize(
    "beam_width,num_hypotheses,expected_hypotheses",
    [(3, 5, 3), (0, 1, 1), (0, 3, 1), (1000, 100, 64), (2, 0, 1), (-4, -4, 1)],
)
def test_beam_search_clamps_its_parameters_as_the_export_does(
    rest_server, client, beam_width, num_hypotheses, expected_hypotheses
):
    # The export clamps beam_width to [1, 64] and num_hypotheses to [1, beam_width]: never a 400.
    inputs = {"source": ["ab"], "beam_width": beam_width, "num_hypotheses": num_hypotheses, "length_penalty": 1.0}
    response = _predict(client, rest_server, {"signature_name": "beam_search", "inputs": inputs})
    assert response.status_code == 200, response.text
    assert response.json()["outputs"]["translations"] == [["BA" + "~" * k for k in range(expected_hypotheses)]]


def test_predict_score_signature_both_formats(rest_server, client):
    targets = ["x", "four", ""]
    row = _predict(
        client,
        rest_server,
        {"signature_name": "score", "instances": [{"source": "s", "target": t} for t in targets]},
    )
    assert row.status_code == 200, row.text
    # One output: row format answers plain values, columnar the bare tensor.
    assert row.json()["predictions"] == pytest.approx([fixture.log_prob_of(t) for t in targets])
    columnar = _predict(
        client, rest_server, {"signature_name": "score", "inputs": {"source": ["s"] * 3, "target": targets}}
    )
    assert columnar.status_code == 200, columnar.text
    assert columnar.json()["outputs"] == pytest.approx([fixture.log_prob_of(t) for t in targets])


# ----------------------------------------------------------------------------------------- errors

# (id, method, path after the model URL, body, status, words the error must contain, exact on TF Serving)
_ERROR_CASES = [
    ("malformed_json", "POST", ":predict", b'{"instances": [', 400, "json", True),
    ("not_utf8", "POST", ":predict", b'{"instances": ["\xff\xfe"]}', 400, "", False),
    ("top_level_list", "POST", ":predict", b'["a"]', 400, "object", False),
    ("no_inputs_key", "POST", ":predict", {"signature_name": "greedy"}, 400, "inputs", True),
    ("both_keys", "POST", ":predict", {"instances": ["a"], "inputs": ["a"]}, 400, "instances", True),
    ("empty_instances", "POST", ":predict", {"instances": []}, 400, "", False),
    ("unknown_signature", "POST", ":predict", {"signature_name": "nope", "instances": ["a"]}, 400, "nope", True),
    ("missing_input_row", "POST", ":predict", {"signature_name": "score", "instances": [{"source": "a"}]}, 400, "target", True),
    ("missing_input_columnar", "POST", ":predict", {"signature_name": "score", "inputs": {"source": ["a"]}}, 400, "target", True),
    ("extra_input_row", "POST", ":predict", {"instances": [{"source": "a", "oops": "b"}]}, 400, "oops", False),
    ("extra_input_columnar", "POST", ":predict", {"inputs": {"source": ["a"], "oops": ["b"]}}, 400, "oops", False),
    ("bare_value_multi_input", "POST", ":predict", {"signature_name": "score", "instances": ["a"]}, 400, "", False),
    ("number_for_string", "POST", ":predict", {"instances": [3]}, 400, "string", False),
    ("string_for_int", "POST", ":predict",
     {"signature_name": "beam_search", "inputs": dict(source=["a"], **{**BEAM_INPUTS, "beam_width": "3"})}, 400, "beam_width", False),
    ("float_for_int", "POST", ":predict",
     {"signature_name": "beam_search", "inputs": dict(source=["a"], **{**BEAM_INPUTS, "beam_width": 2.5})}, 400, "beam_width", False),
    ("scalar_for_vector", "POST", ":predict", {"inputs": {"source": "a"}}, 400, "shape", False),
    ("vector_for_scalar", "POST", ":predict",
     {"signature_name": "beam_search", "inputs": dict(source=["a"], **{**BEAM_INPUTS, "beam_width": [3]})}, 400, "beam_width", False),
    ("ragged", "POST", ":predict", {"inputs": {"source": [["a", "b"], ["c"]]}}, 400, "", False),
    ("scalars_in_row_format", "POST", ":predict",
     {"signature_name": "beam_search", "instances": [dict(source="a", **BEAM_INPUTS)]}, 400, "", False),
    ("tf_invalid_argument", "POST", ":predict",
     {"signature_name": "score", "inputs": {"source": ["a", "b"], "target": ["c"]}}, 400, "batch size", True),
    ("unknown_version_predict", "POST", "/versions/987:predict", {"instances": ["a"]}, 404, "987", True),
    ("unknown_version_status", "GET", "/versions/987", None, 404, "987", True),
    ("unknown_version_metadata", "GET", "/versions/987/metadata", None, 404, "987", True),
    ("get_predict", "GET", ":predict", None, 405, "", False),
    ("post_status", "POST", "", {"instances": ["a"]}, 405, "", False),
    ("delete_metadata", "DELETE", "/metadata", None, 405, "", False),
]


def _send(client, method, url, body):
    content = body if isinstance(body, bytes) or body is None else json.dumps(body).encode("utf-8")
    return client.request(method, url, content=content)


def _assert_error(response, status, words, exact):
    if exact:
        assert response.status_code == status, response.text
    else:
        assert 400 <= response.status_code < 500, response.text
    assert set(response.json()) == {"error"}, response.text
    assert words.lower() in response.json()["error"].lower()


def _assert_still_serving(client, server):
    response = _predict(client, server, {"instances": ["ok"]})
    assert response.status_code == 200 and response.json()["predictions"][0]["translation"] == "KO"


@pytest.mark.parametrize(
    "method,suffix,body,status,words,exact_on_tf_serving", [c[1:] for c in _ERROR_CASES], ids=[c[0] for c in _ERROR_CASES]
)
def test_bad_requests_answer_json_errors_and_the_server_keeps_serving(
    rest_server, client, method, suffix, body, status, words, exact_on_tf_serving
):
    response = _send(client, method, rest_server.model_url + suffix, body)
    _assert_error(response, status, words, exact_on_tf_serving or rest_server.kind == "zoo-serve")
    _assert_still_serving(client, rest_server)  # Same client: the connection was not dropped.


@pytest.mark.parametrize("path,method", [("", "GET"), ("/metadata", "GET"), (":predict", "POST")])
def test_unknown_model_is_404(rest_server, client, path, method):
    body = {"instances": ["a"]} if method == "POST" else None
    response = _send(client, method, f"{rest_server.url}/v1/models/no_such_model{path}", body)
    _assert_error(response, 404, "no_such_model", True)
    _assert_still_serving(client, rest_server)


@pytest.mark.parametrize("method,suffix,allow", [("GET", ":predict", "POST"), ("POST", "", "GET"),
                                                 ("DELETE", "/metadata", "GET")])
def test_405_names_the_allowed_method(zoo_serve_server, client, method, suffix, allow):
    """RFC 9110 (15.5.6): a 405 answer carries an Allow header with the methods the route takes."""
    response = _send(client, method, zoo_serve_server.model_url + suffix, None)
    assert response.status_code == 405 and response.headers.get("allow") == allow, response.headers
    _assert_still_serving(client, zoo_serve_server)


def test_unknown_path_is_404(zoo_serve_server, client):
    response = client.get(f"{zoo_serve_server.url}/v2/whatever")
    _assert_error(response, 404, "/v2/whatever", True)
    _assert_still_serving(client, zoo_serve_server)


def test_request_over_the_size_limit_is_413(zoo_serve_server, client):
    # The zoo-serve fixture runs with max_request_bytes = 64 KiB.
    big = {"instances": ["x" * 1000] * 100}
    response = _predict(client, zoo_serve_server, big)
    _assert_error(response, 413, "65536", True)
    _assert_still_serving(client, zoo_serve_server)


# ------------------------------------------------------------------------------------ concurrency


def test_8_concurrent_clients_x_25_requests_without_failure(rest_server):
    def one_client(worker):
        failures = []
        with httpx.Client(timeout=60) as http:
            for i in range(25):
                source = f"client {worker} request {i}"
                kind = i % 3
                if kind == 0:
                    response = _predict(http, rest_server, {"instances": [source]})
                    ok = response.status_code == 200 and response.json()["predictions"][0]["translation"] == (
                        fixture.expected_translation(source)
                    )
                elif kind == 1:
                    body = {"signature_name": "score", "inputs": {"source": [source], "target": [source]}}
                    response = _predict(http, rest_server, body)
                    ok = response.status_code == 200 and response.json()["outputs"] == pytest.approx(
                        [fixture.log_prob_of(source)]
                    )
                else:
                    body = {"signature_name": "beam_search", "inputs": dict(source=[source], **BEAM_INPUTS)}
                    response = _predict(http, rest_server, body)
                    ok = response.status_code == 200 and response.json()["outputs"]["translations"][0][0] == (
                        fixture.expected_translation(source)
                    )
                if not ok:
                    failures.append((worker, i, response.status_code, response.text[:200]))
        return failures

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        failures = [f for result in pool.map(one_client, range(8)) for f in result]
    assert failures == []


# ----------------------------------------------------------------- versions and the real command line


def test_saved_model_versions_ignores_partial_and_non_numeric_dirs(tmp_path, fixture_base_path):
    for name in ("2", "10", ".tmp-11", "12.partial"):
        shutil.copytree(os.path.join(fixture_base_path, "1"), tmp_path / name)
    (tmp_path / "13").mkdir()  # Still being written: no saved_model.pb yet.
    (tmp_path / "14").write_text("a file, not a directory")
    assert saved_model_versions(str(tmp_path)) == [2, 10]


def test_a_version_directory_named_with_leading_zeros_is_that_version(tmp_path, fixture_base_path):
    """TF Serving reads `007` as version 7 and loads it from `007/`; zoo-serve looked for `7/` and never served it."""
    shutil.copytree(os.path.join(fixture_base_path, "1"), tmp_path / "2")
    shutil.copytree(os.path.join(fixture_base_path, "1"), tmp_path / "007")
    assert saved_model_versions(str(tmp_path)) == [2, 7]
    assert version_path(str(tmp_path), 7) == str(tmp_path / "007")
    assert resolve_model(str(tmp_path)) == ("saved_model", str(tmp_path / "007"))
    registry = ModelRegistry("zoo", str(tmp_path))
    assert registry.poll() is True and registry.current.version == 7 and registry.current.path == str(tmp_path / "007")
    shutil.copytree(os.path.join(fixture_base_path, "1"), tmp_path / "7")  # both spellings: the plain one
    assert version_path(str(tmp_path), 7) == str(tmp_path / "7")


def test_warmup_requests_are_replayed_and_a_failing_one_fails_the_load(tmp_path, fixture_base_path):
    assert replay_warmup_requests(load_version(fixture_base_path, 1)) == 2
    shutil.copytree(os.path.join(fixture_base_path, "1"), tmp_path / "4")
    fixture.write_warmup_requests(str(tmp_path / "4"), [("no_such_signature", {"source": ["x"]})])
    with pytest.raises(ValueError, match="no_such_signature"):
        load_version(str(tmp_path), 4)


def test_a_warmup_file_cut_before_its_first_record_is_said_and_skipped(tmp_path, fixture_base_path, caplog):
    shutil.copytree(os.path.join(fixture_base_path, "1"), tmp_path / "3")
    path = warmup_file(str(tmp_path / "3"))
    with open(path, "wb") as f:
        f.write(b"garbage\n")  # shorter than a record header: TFRecord reads it as empty
    with caplog.at_level(logging.WARNING):
        assert replay_warmup_requests(load_version(str(tmp_path), 3)) == 0
    assert "holds no predict request (8 bytes)" in caplog.text


@pytest.mark.slow
def test_zoo_serve_cli_picks_up_new_versions_without_restart(tmp_path, fixture_base_path):
    base = tmp_path / "models"
    shutil.copytree(os.path.join(fixture_base_path, "1"), base / "1")
    with zoo_serve_subprocess(str(base), "--poll_seconds=0.2") as (url, process), httpx.Client(timeout=30) as http:
        model_url = f"{url}/v1/models/zoo"
        assert http.get(model_url).json()["model_version_status"][0]["version"] == "1"
        shutil.copytree(os.path.join(fixture_base_path, "1"), base / ".tmp-7")  # Ignored: not an integer.
        (base / "5").mkdir()  # Ignored: incomplete.
        shutil.copytree(os.path.join(fixture_base_path, "1"), base / "2")
        statuses = _wait_for_version(http, model_url, "2")
        assert {s["version"]: s["state"] for s in statuses} == {"2": "AVAILABLE", "1": "END"}
        answer = http.post(f"{model_url}/versions/2:predict", json={"instances": ["new"]})
        assert answer.status_code == 200 and answer.json()["predictions"][0]["translation"] == "WEN"
        assert http.post(f"{model_url}/versions/1:predict", json={"instances": ["old"]}).status_code == 404
        # A broken newer version is logged, skipped and reported as END with its reason; 2 keeps serving.
        (base / "3").mkdir()
        (base / "3" / "saved_model.pb").write_bytes(b"not a protobuf")
        time.sleep(1.5)
        broken, served, _ = http.get(model_url).json()["model_version_status"]  # 3, 2, 1
        assert served == {"version": "2", "state": "AVAILABLE", "status": {"error_code": "OK", "error_message": ""}}
        assert (broken["version"], broken["state"], broken["status"]["error_code"]) == ("3", "END", "UNKNOWN")
        assert "saved_model.pb" in broken["status"]["error_message"]
        assert http.post(f"{model_url}:predict", json={"instances": ["still"]}).status_code == 200
        assert process.poll() is None
    assert process.stdout.read().count("Failed to load version 3") == 1  # Some seven polls, one load, one line.


def test_zoo_serve_cli_without_batching_answers_concurrent_requests_each_on_its_own(fixture_base_path):
    flags = ("--enable_batching=false", "--num_batch_threads=1", "--max_batch_size=1")
    with zoo_serve_subprocess(fixture_base_path, *flags) as (url, process):
        texts = [f"request {i}" * (i % 3 + 1) for i in range(8)]

        def predict(text):
            return httpx.post(f"{url}/v1/models/zoo:predict", json={"instances": [text]}, timeout=60)

        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            answers = list(pool.map(predict, texts))
        assert process.poll() is None
    assert [a.status_code for a in answers] == [200] * 8
    assert [a.json()["predictions"][0]["translation"] for a in answers] == [fixture.expected_translation(t) for t in texts]


def _wait_for_version(http, model_url, version, timeout=30):
    """Waits until `version` is the newest one listed and has left LOADING (TF Serving lists a load under way)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        statuses = http.get(model_url).json()["model_version_status"]
        if statuses[0]["version"] == version and statuses[0]["state"] != "LOADING":
            return statuses
        time.sleep(0.1)
    raise AssertionError(f"version {version} was not picked up within {timeout} s: {statuses}")


def test_zoo_serve_cli_rejects_a_missing_model_base_path(tmp_path):
    missing = tmp_path / "nowhere"
    result = subprocess.run(
        [sys.executable, "-m", "recipes.serve", f"--model_base_path={missing}"],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode != 0
    assert str(missing) in result.stderr and "Traceback" not in result.stderr
