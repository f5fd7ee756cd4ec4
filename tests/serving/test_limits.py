"""zoo-serve's bounds (serving.limits): each one answers a JSON error at once, and the server
keeps answering status checks and other requests meanwhile."""

import concurrent.futures
import gzip
import json
import re
import socket
import threading
import time

import httpx
import pytest

from rest_servers import zoo_serve_in_thread
from serving.batching import BatchScheduler
from serving.limits import ServingLimits
from serving.model_registry import ModelRegistry, Signature


@pytest.fixture
def client():
    with httpx.Client(timeout=60) as http:
        yield http


def _assert_json_error(response, status, words):
    assert response.status_code == status, response.text
    assert set(response.json()) == {"error"} and words in response.json()["error"], response.text


def _ok(http, url):
    response = http.post(f"{url}/v1/models/zoo:predict", json={"instances": ["ok"]})
    return response.status_code == 200 and response.json()["predictions"][0]["translation"] == "KO"


class _Gate:
    """A signature function that blocks until the test opens the gate; counts who is waiting."""

    def __init__(self, function):
        self.function, self.entered, self.opened = function, threading.Semaphore(0), threading.Event()

    def __call__(self, **inputs):
        self.entered.release()
        self.opened.wait(timeout=60)
        return self.function(**inputs)


@pytest.fixture
def gated_server(fixture_base_path):
    """zoo-serve whose `greedy` waits for the test; yields (url, gate, limits-setter)."""
    servers = []

    def start(**limits):
        registry = ModelRegistry("zoo", fixture_base_path)
        registry.poll()
        greedy = registry.current.signatures["greedy"]
        gate = _Gate(greedy.function)
        registry.current.signatures["greedy"] = Signature("greedy", gate, greedy.inputs, greedy.outputs)
        context = zoo_serve_in_thread(
            fixture_base_path, registry=registry, poll_seconds=0, limits=ServingLimits(**limits),
            scheduler=BatchScheduler(enable_batching=False),
        )
        servers.append((context, gate))
        return context.__enter__(), gate

    yield start
    for context, gate in servers:
        gate.opened.set()
        context.__exit__(None, None, None)


_GREEDY = {"signature_name": "greedy", "instances": ["slow"]}


def test_past_max_queued_requests_a_predict_gets_503_and_status_still_answers(gated_server, client):
    url, gate = gated_server(max_queued_requests=2)
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        held = [pool.submit(httpx.post, f"{url}/v1/models/zoo:predict", json=_GREEDY, timeout=60) for _ in range(2)]
        assert gate.entered.acquire(timeout=30) and gate.entered.acquire(timeout=30)
        start = time.monotonic()
        _assert_json_error(client.post(f"{url}/v1/models/zoo:predict", json=_GREEDY), 503, "--max_queued_requests=2")
        assert time.monotonic() - start < 5
        assert client.get(f"{url}/v1/models/zoo").json()["ready"] is True
        gate.opened.set()
        assert [f.result().status_code for f in held] == [200, 200]
    assert _ok(client, url)


def test_an_answer_later_than_the_timeout_is_a_504(gated_server, client):
    url, gate = gated_server(request_timeout_seconds=0.5)
    start = time.monotonic()
    _assert_json_error(client.post(f"{url}/v1/models/zoo:predict", json=_GREEDY), 504, "0.5 s")
    assert time.monotonic() - start < 5
    gate.opened.set()
    assert _ok(client, url)


def test_a_body_that_does_not_arrive_in_time_is_a_408(gated_server, client):
    url, _ = gated_server(request_timeout_seconds=0.5)
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(b"POST /v1/models/zoo:predict HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"inst")
        chunks = []
        while chunk := sock.recv(65536):  # The server closes the connection after its 408.
            chunks.append(chunk)
        answer = b"".join(chunks).decode()
    assert answer.startswith("HTTP/1.1 408"), answer
    assert json.loads(answer.split("\r\n\r\n", 1)[1])["error"].startswith("The request body did not arrive")
    assert _ok(client, url)


def test_past_max_connections_new_requests_get_503(gated_server, client):
    url, _ = gated_server(max_connections=3)
    host, port = url.removeprefix("http://").split(":")
    idle = [socket.create_connection((host, int(port)), timeout=30) for _ in range(3)]
    time.sleep(0.2)  # Let the server accept them.
    assert client.get(f"{url}/v1/models/zoo").status_code == 503
    for sock in idle:
        sock.close()
    time.sleep(0.2)
    assert client.get(f"{url}/v1/models/zoo").status_code == 200


@pytest.mark.parametrize(
    "body",
    [{"instances": ["a"] * 1025}, {"inputs": ["a"] * 1025}, {"signature_name": "score", "inputs": {"source": ["a"] * 1025, "target": ["b"]}}],
    ids=["row", "columnar", "columnar_named"],
)
def test_more_sentences_than_the_limit_is_a_413(zoo_serve_server, client, body):
    response = client.post(f"{zoo_serve_server.model_url}:predict", json=body)
    _assert_json_error(response, 413, "1025 examples")
    assert "--max_sentences_per_request" in response.json()["error"]
    assert _ok(client, zoo_serve_server.url)


def test_a_chunked_body_over_the_limit_is_a_413(zoo_serve_server, client):
    # No Content-Length: the server counts while it reads (the fixture server's limit is 64 KiB).
    chunks = (b'{"instances": [' + b'"x",' * 4000 for _ in range(6))
    response = client.post(f"{zoo_serve_server.model_url}:predict", content=chunks)
    _assert_json_error(response, 413, "65536")
    assert _ok(client, zoo_serve_server.url)


def test_a_huge_body_is_not_read_to_its_end(zoo_serve_server, client):
    sent = []

    def endless():  # Up to 1 GiB, far past the 64 KiB limit.
        for _ in range(1024):
            sent.append(1)
            yield b" " * (1 << 20)

    try:
        response = client.post(f"{zoo_serve_server.model_url}:predict", content=endless())
        _assert_json_error(response, 413, "65536")
    except httpx.TransportError:
        pass  # The server closed the connection after its 413, while the client was still sending.
    assert len(sent) < 64  # MiB the client got to send before the server stopped reading.
    assert _ok(client, zoo_serve_server.url)


def test_status_answers_while_a_predict_is_being_parsed(fixture_base_path, client, monkeypatch):
    # Parsing and converting a predict body runs on a worker thread, never on the event loop: hold
    # the parser at a gate (blocked without the GIL) and status calls must still answer meanwhile.
    import serving.rest_app

    real_prepare, entered, release = serving.rest_app.prepare_predict, threading.Event(), threading.Event()

    def gated_prepare(*args):
        entered.set()
        release.wait(60)
        return real_prepare(*args)

    monkeypatch.setattr(serving.rest_app, "prepare_predict", gated_prepare)
    body = json.dumps({"signature_name": "greedy", "instances": ["ab"] * 1000 + [7]}).encode()
    with zoo_serve_in_thread(fixture_base_path, poll_seconds=0) as url:
        status_url = f"{url}/v1/models/zoo"
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            big = pool.submit(httpx.post, f"{status_url}:predict", content=body, timeout=120)
            assert entered.wait(60), "the predict never reached its parser"
            try:
                for _ in range(3):  # Each would time out were the parser holding the event loop.
                    assert client.get(status_url, timeout=10).status_code == 200
                assert not big.done()
            finally:
                release.set()
            _assert_json_error(big.result(), 400, "expects strings")


def test_a_declared_length_far_over_the_limit_is_a_413_at_once(zoo_serve_server):
    host, port = zoo_serve_server.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as connection:
        started = time.monotonic()
        connection.sendall(b"POST /v1/models/zoo:predict HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999\r\n\r\n"
                           b'{"instances": ["a"]}')  # the rest never comes
        answer = b""
        while chunk := connection.recv(4096):  # the server closes the connection after its 413
            answer += chunk
        answer = answer.decode()
    assert answer.startswith("HTTP/1.1 413") and "99999999999" in answer and time.monotonic() - started < 5


def test_gzip_bodies_are_read_as_tf_serving_reads_them(zoo_serve_server, client):
    url = f"{zoo_serve_server.model_url}:predict"
    body = gzip.compress(json.dumps({"instances": ["ok"]}).encode())
    response = client.post(url, content=body, headers={"content-encoding": "gzip"})
    assert response.status_code == 200 and response.json()["predictions"][0]["translation"] == "KO"
    _assert_json_error(client.post(url, content=body[:15], headers={"content-encoding": "gzip"}), 400,
                       "ends before its gzip stream does")
    _assert_json_error(client.post(url, content=body, headers={"content-encoding": "br"}), 400,
                       'Unsupported Content-Encoding "br"')
    bomb = gzip.compress(b" " * (1 << 20))  # 1 KiB that inflates past the 64 KiB limit
    _assert_json_error(client.post(url, content=bomb, headers={"content-encoding": "gzip"}), 413, "gzip-inflated")
    assert _ok(client, zoo_serve_server.url)


def test_connections_that_send_no_headers_are_closed_and_free_their_places(fixture_base_path, client):
    limits = ServingLimits(request_timeout_seconds=1.0, max_connections=4)
    with zoo_serve_in_thread(fixture_base_path, limits=limits, poll_seconds=0) as url:
        host, port = url.removeprefix("http://").split(":")
        silent = [socket.create_connection((host, int(port)), timeout=5) for _ in range(4)]
        silent[0].sendall(b"GET /v1/models/zoo HTTP/1.1\r\nHost: x\r\n")  # headers that stop half-way
        assert client.get(f"{url}/v1/models/zoo").status_code == 503  # every place is taken
        time.sleep(1.5)
        assert all(connection.recv(10) == b"" for connection in silent)  # closed by the server
        assert client.get(f"{url}/v1/models/zoo").status_code == 200
        with socket.create_connection((host, int(port)), timeout=5) as slow:  # slow, but within the deadline
            slow.sendall(b"GET /v1/models/zoo HTTP/1.1\r\n")
            time.sleep(0.5)
            slow.sendall(b"Host: x\r\n\r\n")
            assert slow.recv(12) == b"HTTP/1.1 200"
        for connection in silent:
            connection.close()


def _answer_status(connection):
    """Reads one answer from a raw socket (headers and a Content-Length body); its status line's code."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = connection.recv(65536)
        assert chunk, f"the server closed the connection after {data!r}"
        data += chunk
    head, body = data.split(b"\r\n\r\n", 1)
    length = int(re.search(rb"(?i)content-length: *(\d+)", head).group(1))
    while len(body) < length:
        body += connection.recv(65536)
    return int(head.split()[1])


def test_a_keep_alive_connection_outlives_the_deadline_of_its_first_headers(fixture_base_path):
    # The deadline armed when the connection opened must end when the headers are in: left running,
    # it closed the connection between two requests, at times with the next one already sent (the
    # soak run's clients saw dropped connections).
    limits = ServingLimits(request_timeout_seconds=1.0)
    with zoo_serve_in_thread(fixture_base_path, limits=limits, poll_seconds=0) as url:
        host, port = url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=5) as connection:
            for _ in range(2):
                connection.sendall(b"GET /v1/models/zoo HTTP/1.1\r\nHost: x\r\n\r\n")
                assert _answer_status(connection) == 200
                time.sleep(1.5)  # idle past the 1 s deadline, within uvicorn's 5 s keep-alive


@pytest.mark.parametrize("version", ["%C2%B2", "%D9%A1"])  # "²" and Arabic-Indic "1": digits to Python, not versions
def test_a_version_of_non_ascii_digits_is_a_404(zoo_serve_server, client, version):
    response = client.get(f"{zoo_serve_server.model_url}/versions/{version}")
    _assert_json_error(response, 404, "is not an integer")


def test_an_empty_signature_name_is_serving_default(zoo_serve_server, client):
    response = client.post(f"{zoo_serve_server.model_url}:predict", json={"signature_name": "", "instances": ["ok"]})
    assert response.status_code == 200, response.text


@pytest.mark.parametrize("request_bytes", [
    b"POST /v1/models/zoo:predict HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n{}",
    b"POST /v1/models/zoo:predict HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n{}",
    b"GARBAGE\r\n\r\n",
], ids=["length_not_a_number", "negative_length", "no_request_line"])
def test_a_request_that_is_not_http_gets_a_json_400(zoo_serve_server, client, request_bytes):
    # uvicorn's parser refused it with a plain-text "Invalid HTTP request received.", where every other bad
    # request gets {"error": ...}.
    host, port = zoo_serve_server.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as connection:
        connection.sendall(request_bytes)
        answer = b""
        while chunk := connection.recv(4096):  # the server closes the connection after its 400
            answer += chunk
    head, body = answer.decode().split("\r\n\r\n", 1)
    assert head.startswith("HTTP/1.1 400") and "content-type: application/json" in head.lower()
    assert json.loads(body)["error"].startswith("invalid HTTP request: expected an HTTP/1.1 request line")
    assert _ok(client, zoo_serve_server.url)
