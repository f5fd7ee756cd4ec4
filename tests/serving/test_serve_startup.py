"""How `zoo-serve` refuses to start: one `zoo-serve: error: ...` line and exit status 2, before the model loads."""

import socket

import httpx
import pytest

from rest_servers import free_port, run_zoo_serve, zoo_serve_subprocess
from serving.server import StartError, listening_sockets


def _refusal(model_base_path, port=None):
    """The error lines of a zoo-serve that must exit with status 2, and any saying it loaded or announced the model."""
    result = run_zoo_serve(f"--model_base_path={model_base_path}", f"--rest_api_port={port or free_port()}", timeout=60)
    assert result.returncode == 2, result.stderr
    return [line for line in result.stderr.splitlines() if line.startswith("zoo-serve:")] + [
        line for line in result.stderr.splitlines() if "Serving version" in line or "REST API at" in line
    ]


def test_a_taken_port_fails_at_once_naming_host_and_port(fixture_base_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        lines = _refusal(fixture_base_path, port)
    # Before the model: nothing loaded, nothing announced.
    assert lines == [
        f"zoo-serve: error: cannot listen on 127.0.0.1:{port}: address already in use "
        "(another process listens there; choose another --rest_api_port)"
    ]


def test_a_taken_port_is_said_before_tensorflow_loads(fixture_base_path, tmp_path):
    # A `tensorflow` that cannot be imported first on the path: the refusal must come without it.
    (tmp_path / "tensorflow").mkdir()
    (tmp_path / "tensorflow" / "__init__.py").write_text("raise ImportError('tensorflow was imported')\n")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run_zoo_serve(f"--model_base_path={fixture_base_path}", f"--rest_api_port={port}", timeout=60,
                               path_first=str(tmp_path))
    assert result.returncode == 2 and "tensorflow was imported" not in result.stderr, result.stderr
    assert f"zoo-serve: error: cannot listen on 127.0.0.1:{port}: address already in use" in result.stderr


def test_the_port_is_held_from_the_check_on():
    port = free_port()
    held = listening_sockets("127.0.0.1", port)
    try:
        # A second server started while the first loads its model fails at once, not once both have loaded.
        with pytest.raises(StartError, match=f"cannot listen on 127.0.0.1:{port}: address already in use"):
            listening_sockets("127.0.0.1", port)
    finally:
        for sock in held:
            sock.close()
    for sock in listening_sockets("127.0.0.1", port):  # free again once closed
        sock.close()


@pytest.fixture(scope="module")
def workdir(tmp_path_factory, fixture_base_path):
    """A training workdir as zoo-train leaves it: the versions under export/ (here the fixture's version 1)."""
    workdir = tmp_path_factory.mktemp("workdir")
    (workdir / "export").symlink_to(fixture_base_path, target_is_directory=True)
    return workdir


def test_a_version_directory_as_base_path_fails_naming_its_parent(fixture_base_path):
    assert _refusal(f"{fixture_base_path}/1/") == [
        f"zoo-serve: error: --model_base_path {fixture_base_path}/1/ holds no numbered version directory: it is "
        f"version 1 itself (it holds saved_model.pb); give the directory above it: --model_base_path={fixture_base_path}"
    ]


def test_a_workdir_as_base_path_fails_naming_its_export(workdir):
    assert _refusal(workdir) == [
        f"zoo-serve: error: --model_base_path {workdir} holds no numbered version directory, but its export/ "
        f"does (version(s) 1): give --model_base_path={workdir}/export"
    ]


def test_a_savedmodel_outside_a_version_directory_is_told_to_move_into_one(tmp_path, fixture_base_path):
    (tmp_path / "model").symlink_to(f"{fixture_base_path}/1", target_is_directory=True)
    [line] = _refusal(f"{tmp_path}/model")
    assert "it is a SavedModel itself (it holds saved_model.pb); move it into a directory named 1" in line


def test_an_empty_base_path_is_still_waited_on(tmp_path, workdir):
    # As TF Serving: a version may appear there later. A workdir's export/ is the base path and serves.
    empty = tmp_path / "empty"
    empty.mkdir()
    with zoo_serve_subprocess(str(empty)) as (url, _):
        assert httpx.get(f"{url}/v1/models/zoo").status_code == 404
    with zoo_serve_subprocess(str(workdir / "export")) as (url, _):
        assert httpx.get(f"{url}/v1/models/zoo").json()["ready"] is True


@pytest.mark.parametrize("flag, words", [
    ("--model_name=a/b", "--model_name must be a non-empty name without"),
    ("--model_name=", "--model_name must be a non-empty name without"),
    ("--poll_seconds=nan", "--poll_seconds must be a finite number"),
    ("--request_timeout_seconds=inf", "--request_timeout_seconds must be a finite number"),
])
def test_names_no_url_reaches_and_non_finite_seconds_are_refused(fixture_base_path, flag, words):
    result = run_zoo_serve(f"--model_base_path={fixture_base_path}", f"--rest_api_port={free_port()}", flag, timeout=60)
    assert result.returncode == 2 and words in result.stderr, result.stderr
    assert "REST API at" not in result.stderr
