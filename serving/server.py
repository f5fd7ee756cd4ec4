"""Runs TF Serving's REST API for one model's versions, on one machine, without Docker.

`serve` is what the `zoo-serve` command (`recipes/serve.py`) calls once its flags are checked:
it serves the highest loadable version under `model_base_path` and picks up newer ones while
running. It takes its port before it loads the model: a port another process holds is a one-line
error at once (`StartError`; `zoo-serve` exits with status 2), not a failure once the model has loaded.
So is a base path that can never serve but names the right one: a version directory itself, or
a training workdir whose `export/` holds the versions. An empty base path is waited on.
"""

import errno
import logging
import os
import socket
import sys

from serving.limits import ServingLimits
from zoo.constants import EXPORT_DIR, SAVED_MODEL_FILE, saved_model_versions


class StartError(ValueError):
    """The server cannot start for a reason the user can fix (a port, a host, a base path); one line."""


def serve(model_base_path, model_name="zoo", host="127.0.0.1", port=8501, limits=None, poll_seconds=1.0,
          max_batch_size=64, num_batch_threads=2, enable_batching=True, on_phase=None, sockets=None):
    """Serves `model_base_path` at `http://host:port/v1/models/<model_name>` until interrupted.

    Args:
      model_base_path: directory of numeric version directories (1/, 2/, ...).
      model_name: the model's name in the URLs.
      host, port: where to listen.
      limits: a `ServingLimits` (request size, sentences, queue, timeout, connections).
      poll_seconds: seconds between looks for a new version; 0 disables.
      max_batch_size, num_batch_threads, enable_batching: how concurrent requests are merged.
      on_phase: None, or `on_phase(key, description)`, called as each start-up phase ends, the last
        one (`app`) just before the server starts answering (`zoo-serve --profile_startup`).
      sockets: None, or `listening_sockets(host, port)` taken by the caller (`zoo-serve` takes them
        before it imports TensorFlow, so a port in use is said at once).
    """
    on_phase = on_phase or (lambda key, description: None)
    check_base_path(model_base_path)
    sockets = listening_sockets(host, port) if sockets is None else sockets
    # Imported here so that the command's --help and usage errors answer before TensorFlow loads.
    import uvicorn

    from serving.batching import BatchScheduler
    from serving.model_registry import ModelRegistry
    from serving.rest_app import create_app

    on_phase("import_server", "uvicorn, starlette and the server's modules")
    limits = limits or ServingLimits()
    logging.getLogger().setLevel(logging.INFO)
    registry = ModelRegistry(model_name, model_base_path)
    if not registry.poll():
        logging.warning("No loadable version under %s yet; waiting for one.", model_base_path)
    on_phase("load_model", "the newest version: its op libraries, tf.saved_model.load and its warmup requests")
    scheduler = BatchScheduler(max_batch_size, num_batch_threads, enable_batching)
    rest_app = create_app(registry, limits, poll_seconds, scheduler)
    on_phase("app", "the batch scheduler and the REST app")
    logging.info("zoo-serve: REST API at http://%s:%d/v1/models/%s", host, port, model_name)
    config = uvicorn.Config(rest_app, host=host, port=port, log_level="warning", access_log=False,
                            **limits.uvicorn_options())
    server = uvicorn.Server(config)
    try:
        server.run(sockets=sockets)
    except KeyboardInterrupt:
        pass
    if not server.started:  # as uvicorn.run: the app's start-up failed (uvicorn logged why)
        sys.exit(3)


def check_base_path(model_base_path):
    """Refuses a `model_base_path` without versions that is a SavedModel itself or holds `export/` versions.

    TF Serving (and `zoo-serve`) wait for a version to appear under an empty base path; these two
    would never get one there, and the message names the path meant.

    Raises:
      StartError: the path holds `saved_model.pb` (its parent, if it is a numbered version
        directory, is the base path), or its `export/` holds numbered versions.
    """
    if saved_model_versions(model_base_path):
        return
    path = os.path.normpath(model_base_path)
    given = f"--model_base_path {model_base_path} holds no numbered version directory"
    if os.path.isfile(os.path.join(path, SAVED_MODEL_FILE)):
        if os.path.basename(path).isdigit():
            raise StartError(f"{given}: it is version {int(os.path.basename(path))} itself (it holds "
                               f"{SAVED_MODEL_FILE}); give the directory above it: "
                               f"--model_base_path={os.path.dirname(path) or os.curdir}")
        raise StartError(f"{given}: it is a SavedModel itself (it holds {SAVED_MODEL_FILE}); move it into a "
                           "directory named 1 and give that directory's parent as --model_base_path")
    export = os.path.join(path, EXPORT_DIR)
    versions = saved_model_versions(export)
    if versions:
        raise StartError(f"{given}, but its {EXPORT_DIR}/ does (version(s) {', '.join(map(str, versions))}): "
                           f"give --model_base_path={export}")


def listening_sockets(host, port):
    """Sockets listening on `port` at every address `host` names, as asyncio's (uvicorn's) own bind.

    They listen at once, so the port is this server's from then on: a second server started
    meanwhile fails here too, and connections made while the model loads wait for their answer.

    Raises:
      StartError: `host` names no address here, or `port` is taken (or not ours to take); the
        message names both: "cannot listen on 127.0.0.1:8501: address already in use ...".
    """
    where = f"[{host}]:{port}" if ":" in (host or "") else f"{host}:{port}"
    try:
        infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as error:
        raise StartError(f"cannot listen on {where}: {_reason(error)}") from None
    sockets, skipped = [], None
    for family, kind, proto, _, address in dict.fromkeys(infos):
        try:
            sock = socket.socket(family, kind, proto)
        except OSError as error:  # as asyncio: a family this machine lacks is skipped
            skipped = error
            continue
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:  # as asyncio: one socket per family, no dual stack
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind(address)
            sock.listen(2048)  # uvicorn's backlog
        except OSError as error:
            sock.close()
            if error.errno == errno.EADDRNOTAVAIL:  # as asyncio: that family is not enabled here
                skipped = error
                continue
            for other in sockets:
                other.close()
            raise StartError(f"cannot listen on {where}: {_reason(error)}") from None
        sockets.append(sock)
    if not sockets:
        raise StartError(f"cannot listen on {where}: {_reason(skipped)}")
    return sockets


def _reason(error):
    """Why a bind failed, in the words of the system ("address already in use"), with a hint."""
    reason = (getattr(error, "strerror", None) or (str(error) if error else "") or "no address to bind").lower()
    if getattr(error, "errno", None) == errno.EADDRINUSE:
        reason += " (another process listens there; choose another --rest_api_port)"
    elif isinstance(error, socket.gaierror) or getattr(error, "errno", None) == errno.EADDRNOTAVAIL:
        reason += " (no address of this machine; check --host)"
    return reason
