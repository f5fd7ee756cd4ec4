"""Servers for the serving tests: `zoo-serve` on a free localhost port, or a real TF Serving.

Set `TF_SERVING_URL` (e.g. `http://localhost:8501`) and, if the model is not called "zoo",
`TF_SERVING_MODEL_NAME` to run the REST and client tests against a real TF Serving as well; it
must serve the fixture of `saved_model_fixture.py` (see serving/README.md). Without
`TF_SERVING_URL` those runs are skipped with that reason.
"""

import os

import httpx
import pytest

import saved_model_fixture
from rest_servers import RestServer, zoo_serve_in_thread
from serving.limits import ServingLimits


@pytest.fixture(scope="session")
def fixture_base_path(tmp_path_factory):
    """A model base path holding the fixture SavedModel as version 1."""
    base_path = str(tmp_path_factory.mktemp("fixture_model"))
    saved_model_fixture.build_saved_model(base_path, version=1)
    return base_path


@pytest.fixture(scope="session")
def zoo_serve_server(fixture_base_path):
    limits = ServingLimits(max_request_bytes=64 * 1024)
    with zoo_serve_in_thread(fixture_base_path, limits=limits, poll_seconds=0) as url:
        yield RestServer(url, "zoo", "zoo-serve", "1")


@pytest.fixture(scope="session", params=["zoo-serve", "tf-serving"])
def rest_server(request):
    """The server under test: zoo-serve always; TF Serving too when TF_SERVING_URL is set."""
    if request.param == "zoo-serve":
        return request.getfixturevalue("zoo_serve_server")
    url = os.environ.get("TF_SERVING_URL")
    if not url:
        pytest.skip("TF_SERVING_URL is not set: no real TF Serving to test against (see serving/README.md)")
    model_name = os.environ.get("TF_SERVING_MODEL_NAME", "zoo")
    statuses = httpx.get(f"{url.rstrip('/')}/v1/models/{model_name}", timeout=10).json()
    version = max(
        (s["version"] for s in statuses["model_version_status"] if s["state"] == "AVAILABLE"), key=int
    )
    return RestServer(url.rstrip("/"), model_name, "tf-serving", version)
