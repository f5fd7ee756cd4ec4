"""Servers under test for tests/serving: zoo-serve in a thread or as the real CLI, on a free port."""

import contextlib
import dataclasses
import os
import shutil
import socket
import subprocess
import sys
import threading
import time

import httpx
import uvicorn

from serving.batching import BatchScheduler
from serving.limits import ServingLimits
from serving.model_registry import ModelRegistry
from serving.rest_app import create_app

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@dataclasses.dataclass
class RestServer:
    """A server under test: where it listens and whether it is zoo-serve or TF Serving."""

    url: str
    model_name: str
    kind: str  # "zoo-serve" or "tf-serving"
    version: str

    @property
    def model_url(self) -> str:
        return f"{self.url}/v1/models/{self.model_name}"


@contextlib.contextmanager
def zoo_serve_in_thread(model_base_path: str, model_name: str = "zoo", registry=None, **app_kwargs):
    """Runs the zoo-serve app with uvicorn in a thread on a free port; yields the base URL.

    `app_kwargs` go to `create_app` (`limits`, `poll_seconds`, `scheduler`); `registry` replaces
    the one built (and polled once) from `model_base_path`.
    """
    if registry is None:
        registry = ModelRegistry(model_name, model_base_path)
        registry.poll()
    app_kwargs.setdefault("scheduler", BatchScheduler(max_batch_size=16, num_batch_threads=2))
    limits = app_kwargs.setdefault("limits", ServingLimits())
    config = uvicorn.Config(
        create_app(registry, **app_kwargs), host="127.0.0.1", port=0, log_level="warning", access_log=False,
        **limits.uvicorn_options(),
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("zoo-serve did not start in a thread within 30 s")
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def zoo_serve_command(*flags: str) -> list:
    """The `zoo-serve` command line with `flags` (`python -m recipes.serve` where it is not installed)."""
    command = shutil.which("zoo-serve")
    return ([command] if command else [sys.executable, "-m", "recipes.serve"]) + list(flags)


def _checkout_environment() -> dict:
    """The environment that makes a command import this checkout's `serving`, however the project was installed."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [REPO_ROOT, os.environ.get("PYTHONPATH")]))}


def run_zoo_serve(*flags: str, timeout: float = 120, path_first: str = "") -> subprocess.CompletedProcess:
    """Runs `zoo-serve` with `flags` to its end (for the ways it refuses to start); output as text.
    `path_first`: a directory searched for modules before all others (a stand-in package)."""
    env = _checkout_environment()
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [path_first, env["PYTHONPATH"]]))
    return subprocess.run(zoo_serve_command(*flags), cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                          timeout=timeout)


@contextlib.contextmanager
def zoo_serve_subprocess(model_base_path: str, *extra_flags: str, model_name: str = "zoo"):
    """Runs the real `zoo-serve` command line; yields (base URL, process)."""
    port = free_port()
    process = subprocess.Popen(
        zoo_serve_command(f"--model_base_path={model_base_path}", f"--model_name={model_name}",
                          f"--rest_api_port={port}", *extra_flags),
        cwd=REPO_ROOT,
        env=_checkout_environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"zoo-serve exited with {process.returncode}:\n{process.stdout.read()}")
            try:
                if httpx.get(f"{url}/v1/models/{model_name}", timeout=2).status_code in (200, 404):
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("zoo-serve did not answer within 90 s")
            time.sleep(0.2)
        yield url, process
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
