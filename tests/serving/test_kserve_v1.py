"""KServe's V1 data plane against zoo-serve: the exchanges of `kserve.InferenceRESTClient`.

KServe's Python SDK cannot share this environment (it pins an older protobuf than TensorFlow's),
so these tests send exactly what its protocol-v1 client sends and read the answer exactly as it
does (kserve 0.21, `kserve/inference_client.py`), and, when `KSERVE_PYTHON` names an interpreter
that has the SDK (`python3 -m venv kv && kv/bin/pip install kserve`), the SDK's own client talks
to zoo-serve from that interpreter:

- `is_model_ready(base_url, name)`: `GET {base}/v1/models/{name}`; 503 means False, any other
  non-2xx raises, else it returns `response.json().get("ready")`.
- `is_server_live(base_url)`: `GET {base}/`; returns `response.json().get("status").lower() == "alive"`.
- `infer(base_url, data, model_name)`: `POST {base}/v1/models/{name}:predict` with the dict as
  JSON and `content-type: application/json`; returns the parsed answer.
"""

import asyncio
import json
import os
import shutil
import subprocess

import httpx
import pytest

import saved_model_fixture as fixture
from rest_servers import zoo_serve_in_thread
from serving.model_registry import ModelRegistry


async def is_model_ready(http, base_url, model_name):
    response = await http.get(f"{base_url}/v1/models/{model_name}")
    if response.status_code == 503:
        return False
    response.raise_for_status()
    return response.json().get("ready")


async def is_server_live(http, base_url):
    response = await http.get(f"{base_url}/")
    response.raise_for_status()
    return response.json().get("status").lower() == "alive"


async def infer(http, base_url, data, model_name):
    response = await http.post(
        f"{base_url}/v1/models/{model_name}:predict", content=json.dumps(data), headers={"content-type": "application/json"}
    )
    response.raise_for_status()
    return json.loads(response.content)


def test_kserve_v1_client_sees_zoo_serve_live_ready_and_predicting(zoo_serve_server):
    async def main():
        async with httpx.AsyncClient(timeout=60) as http:
            return (
                await is_server_live(http, zoo_serve_server.url),
                await is_model_ready(http, zoo_serve_server.url, "zoo"),
                await infer(http, zoo_serve_server.url, {"instances": ["kserve"]}, "zoo"),
            )

    live, ready, answer = asyncio.run(main())
    assert live is True and ready is True
    assert answer["predictions"][0]["translation"] == fixture.expected_translation("kserve")


def test_ready_is_false_for_a_version_that_no_longer_serves(tmp_path, fixture_base_path):
    shutil.copytree(f"{fixture_base_path}/1", tmp_path / "1")
    registry = ModelRegistry("zoo", str(tmp_path))
    registry.poll()
    shutil.copytree(f"{fixture_base_path}/1", tmp_path / "2")
    registry.poll()  # Version 2 serves; version 1 is END.
    with zoo_serve_in_thread(str(tmp_path), registry=registry, poll_seconds=0) as url:
        answers = {v: httpx.get(f"{url}/v1/models/zoo/versions/{v}").json() for v in (1, 2)}
        whole = httpx.get(f"{url}/v1/models/zoo").json()
    assert answers[1]["ready"] is False and answers[1]["model_version_status"][0]["state"] == "END"
    assert answers[2]["ready"] is True and answers[2]["model_version_status"][0]["state"] == "AVAILABLE"
    assert whole["ready"] is True and [s["state"] for s in whole["model_version_status"]] == ["AVAILABLE", "END"]
    # TF Serving's own fields are as they were: `ready` is the only addition.
    assert set(whole) == {"model_version_status", "ready"}


# Run by the KServe SDK's interpreter: its protocol-v1 REST client against the URL given.
KSERVE_SCRIPT = """
import asyncio, json, sys
from kserve import InferenceRESTClient, RESTConfig

async def main(url):
    client = InferenceRESTClient(RESTConfig(protocol="v1", retries=0, timeout=60))
    try:
        return {"live": await client.is_server_live(url), "ready": await client.is_model_ready(url, "zoo"),
                "answer": await client.infer(url, {"instances": ["kserve"]}, model_name="zoo")}
    finally:
        await client.close()

print(json.dumps(asyncio.run(main(sys.argv[1]))))
"""


def test_the_kserve_sdks_own_client_against_zoo_serve(zoo_serve_server):
    python = os.environ.get("KSERVE_PYTHON")
    if not python:
        pytest.skip("KSERVE_PYTHON is not set: no interpreter with the kserve SDK (it cannot share TensorFlow's)")
    result = subprocess.run([python, "-c", KSERVE_SCRIPT, zoo_serve_server.url], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout.splitlines()[-1])
    assert answer["live"] is True and answer["ready"] is True
    assert answer["answer"]["predictions"][0]["translation"] == fixture.expected_translation("kserve")
