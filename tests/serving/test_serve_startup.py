"""How `zoo-serve` refuses to start: one `zoo-serve: error: ...` line and exit status 2, before the model loads."""

import socket

import pytest

from rest_servers import free_port, run_zoo_serve
from serving.server import listening_sockets
from zoo.cli import CommandError


def _error_lines(result):
    return [line for line in result.stderr.splitlines() if line.startswith("zoo-serve:")]


def test_a_taken_port_fails_at_once_naming_host_and_port(fixture_base_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run_zoo_serve(f"--model_base_path={fixture_base_path}", f"--rest_api_port={port}")
    assert result.returncode == 2, result.stderr
    assert _error_lines(result) == [
        f"zoo-serve: error: cannot listen on 127.0.0.1:{port}: address already in use "
        "(another process listens there; choose another --rest_api_port)"
    ], result.stderr
    # Before the model: nothing loaded, nothing announced.
    assert "Serving version" not in result.stderr and "REST API at" not in result.stderr, result.stderr


def test_the_port_is_held_from_the_check_on():
    port = free_port()
    held = listening_sockets("127.0.0.1", port)
    try:
        # A second server started while the first loads its model fails at once, not once both have loaded.
        with pytest.raises(CommandError, match=f"cannot listen on 127.0.0.1:{port}: address already in use"):
            listening_sockets("127.0.0.1", port)
    finally:
        for sock in held:
            sock.close()
    for sock in listening_sockets("127.0.0.1", port):  # free again once closed
        sock.close()
