"""Version handling of zoo-serve with real directories and the real poll loop.

A broken version is loaded once and logged once; the last good version keeps answering; a
version whose files are fixed is picked up; a vanished base path is logged once, never as a
traceback, and serving goes on.
"""

import concurrent.futures
import logging
import os
import shutil
import threading
import time

import httpx
import pytest

import serving.model_registry as model_registry
from rest_servers import zoo_serve_in_thread
from serving.model_registry import ModelRegistry

POLL_SECONDS = 0.05


@pytest.fixture
def load_attempts(monkeypatch):
    """Counts `load_version` calls per version while the test runs."""
    attempts = {}
    original = model_registry.load_version

    def counting(base_path, version):
        attempts[version] = attempts.get(version, 0) + 1
        return original(base_path, version)

    monkeypatch.setattr(model_registry, "load_version", counting)
    return attempts


def _break(version_dir):
    """A version directory whose saved_model.pb is not a protobuf (a half-written export)."""
    os.makedirs(version_dir / "variables")
    (version_dir / "saved_model.pb").write_bytes(b"not a protobuf")


def _served(http, url):
    statuses = http.get(f"{url}/v1/models/zoo").json()["model_version_status"]
    return [s["version"] for s in statuses if s["state"] == "AVAILABLE"]


def _translate(http, url, text):
    response = http.post(f"{url}/v1/models/zoo:predict", json={"instances": [text]})
    assert response.status_code == 200, response.text
    return response.json()["predictions"][0]["translation"]


def _wait_until(condition, timeout=30):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(POLL_SECONDS)


def _messages(caplog, text, level=None):
    return [r for r in caplog.records if text in r.getMessage() and (level is None or r.levelno == level)]


def test_a_broken_version_is_loaded_once_logged_once_and_picked_up_once_fixed(
    tmp_path, fixture_base_path, load_attempts, caplog
):
    caplog.set_level(logging.INFO)
    shutil.copytree(os.path.join(fixture_base_path, "1"), tmp_path / "1")
    with zoo_serve_in_thread(str(tmp_path), poll_seconds=POLL_SECONDS) as url, httpx.Client(timeout=30) as http:
        assert _served(http, url) == ["1"]
        _break(tmp_path / "2")
        time.sleep(40 * POLL_SECONDS)  # Some forty polls.
        assert load_attempts == {1: 1, 2: 1}
        assert len(_messages(caplog, "Failed to load version 2", logging.ERROR)) == 1
        assert _served(http, url) == ["1"] and _translate(http, url, "still one") == "ENO LLITS"

        shutil.rmtree(tmp_path / "2")
        shutil.copytree(os.path.join(fixture_base_path, "1"), tmp_path / "2")  # The export is fixed.
        _wait_until(lambda: _served(http, url) == ["2"])
        assert load_attempts == {1: 1, 2: 2}
        assert _translate(http, url, "two") == "OWT"
        assert len(_messages(caplog, "Serving version 2")) == 1
    assert not [r for r in caplog.records if r.exc_info]  # No traceback was logged.


def test_the_highest_version_that_loads_is_served_when_a_newer_one_is_broken(tmp_path, fixture_base_path, caplog):
    shutil.copytree(os.path.join(fixture_base_path, "1"), tmp_path / "4")
    _break(tmp_path / "7")
    registry = ModelRegistry("zoo", str(tmp_path))
    assert registry.poll() is True and registry.current.version == 4
    assert registry.poll() is False and registry.current.version == 4
    assert len(_messages(caplog, "Failed to load version 7", logging.ERROR)) == 1


def test_a_version_being_loaded_is_reported_as_loading(tmp_path, fixture_base_path, monkeypatch):
    """TF Serving lists a version whose load is under way as LOADING; zoo-serve listed nothing (404 for it)."""
    shutil.copytree(os.path.join(fixture_base_path, "1"), tmp_path / "1")
    registry = ModelRegistry("zoo", str(tmp_path))
    assert registry.poll() is True
    shutil.copytree(os.path.join(fixture_base_path, "1"), tmp_path / "2")
    loading, release = threading.Event(), threading.Event()
    original = model_registry.load_version

    def slow_load(base_path, version):
        loading.set()
        release.wait(30)
        return original(base_path, version)

    monkeypatch.setattr(model_registry, "load_version", slow_load)
    poller = threading.Thread(target=registry.poll)
    poller.start()
    try:
        assert loading.wait(30)
        assert [(s.version, s.state) for s in registry.statuses("zoo")] == [(2, "LOADING"), (1, "AVAILABLE")]
        assert [s.state for s in registry.statuses("zoo", 2)] == ["LOADING"] and registry.current.version == 1
    finally:
        release.set()
        poller.join(60)
    assert [(s.version, s.state) for s in registry.statuses("zoo")] == [(2, "AVAILABLE"), (1, "END")]


def test_a_vanished_base_path_is_logged_once_and_serving_goes_on(tmp_path, fixture_base_path, load_attempts, caplog):
    caplog.set_level(logging.INFO)
    base = tmp_path / "models"
    shutil.copytree(os.path.join(fixture_base_path, "1"), base / "1")
    with zoo_serve_in_thread(str(base), poll_seconds=POLL_SECONDS) as url, httpx.Client(timeout=30) as http:
        shutil.rmtree(base)
        time.sleep(40 * POLL_SECONDS)
        assert len(_messages(caplog, "Cannot read model base path", logging.WARNING)) == 1
        assert _served(http, url) == ["1"] and _translate(http, url, "gone") == "ENOG"

        shutil.copytree(os.path.join(fixture_base_path, "1"), base / "3")  # The base path comes back, newer.
        _wait_until(lambda: _served(http, url) == ["3"])
        assert len(_messages(caplog, "is readable again")) == 1
        assert load_attempts == {1: 1, 3: 1}
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]


def test_version_swaps_under_load_lose_no_request(tmp_path, fixture_base_path):
    shutil.copytree(os.path.join(fixture_base_path, "1"), tmp_path / "1")
    stop, failures, answered = threading.Event(), [], []

    def client(url, worker):
        with httpx.Client(timeout=60) as http:
            while not stop.is_set():
                text = f"client {worker} request {len(answered)}"
                response = http.post(f"{url}/v1/models/zoo:predict", json={"instances": [text]})
                if response.status_code != 200 or response.json()["predictions"][0]["translation"] != text.upper()[::-1]:
                    failures.append((response.status_code, response.text[:200]))
                answered.append(1)

    with zoo_serve_in_thread(str(tmp_path), poll_seconds=POLL_SECONDS) as url, httpx.Client(timeout=30) as http:
        with concurrent.futures.ThreadPoolExecutor(6) as pool:
            clients = [pool.submit(client, url, worker) for worker in range(6)]
            for version in (2, 3, 4):
                shutil.copytree(os.path.join(fixture_base_path, "1"), tmp_path / f".tmp-{version}")
                os.rename(tmp_path / f".tmp-{version}", tmp_path / str(version))  # How an export lands.
                _wait_until(lambda: _served(http, url) == [str(version)])
            stop.set()
            for future in clients:
                future.result()
        statuses = http.get(f"{url}/v1/models/zoo").json()["model_version_status"]
    assert failures == [] and len(answered) > 30
    assert [(s["version"], s["state"]) for s in statuses] == [("4", "AVAILABLE"), ("3", "END"), ("2", "END"), ("1", "END")]
