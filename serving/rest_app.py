"""The REST API of TF Serving, as a Starlette app: what `zoo-serve` runs.

Endpoints (`{name}` is the model name, `/versions/{v}` is optional everywhere):

- `GET  /v1/models/{name}[/versions/{v}]`: model status (`model_version_status`).
- `GET  /v1/models/{name}[/versions/{v}]/metadata`: signature defs (`metadata.signature_def`).
- `POST /v1/models/{name}[/versions/{v}]:predict`: row (`instances`) or columnar (`inputs`)
  request, see `serving.json_tensor`.

Every failure answers `{"error": "..."}`: 400 for a bad request body, an unknown signature or a
TensorFlow InvalidArgument, 404 for an unknown model, version or path, 405 for a wrong method,
413 for a body over `max_request_bytes`, 500 for internal errors. The connection stays usable.
"""

import asyncio
import contextlib
import json
import logging
import re

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from serving import json_tensor
from serving.batching import BatchScheduler
from serving.errors import (
    BadRequestError,
    MethodNotAllowedError,
    NotFoundError,
    PayloadTooLargeError,
    ServingError,
)
from serving.model_registry import ModelRegistry

_MODEL_PATH = re.compile(
    r"(?P<name>[^/:]+)(?:/versions/(?P<version>[^/:]+))?(?P<action>/metadata|:[A-Za-z]+)?/?"
)


def json_response(content, status_code: int = 200) -> Response:
    # TF Serving writes UTF-8 text and NaN/Infinity as is; starlette's JSONResponse refuses NaN.
    body = json.dumps(content, ensure_ascii=False, allow_nan=True, separators=(",", ":"))
    return Response(body.encode("utf-8"), status_code=status_code, media_type="application/json")


def create_app(
    registry: ModelRegistry,
    max_request_bytes: int = 16 * 1024 * 1024,
    poll_seconds: float = 1.0,
    scheduler: BatchScheduler = None,
) -> Starlette:
    """Builds the app serving `registry`'s model.

    Args:
        registry: the model (already polled once if it should serve right away).
        max_request_bytes: larger request bodies get 413.
        poll_seconds: how often to look for a new version under the model base path; 0 disables.
        scheduler: runs predictions; default `BatchScheduler()`.
    """
    scheduler = scheduler or BatchScheduler()

    async def models_endpoint(request: Request) -> Response:
        try:
            return await _handle_model_request(request, registry, scheduler, max_request_bytes)
        except ServingError as error:
            return json_response({"error": error.message}, error.status_code)
        except Exception as error:  # Last resort: answer, log, keep serving.
            logging.exception("Unhandled error for %s %s", request.method, request.url.path)
            return json_response({"error": f"Internal error: {error!r}"}, 500)

    async def unknown_path(request: Request) -> Response:
        await _drain(request)
        return json_response({"error": f"Malformed request: {request.method} {request.url.path}"}, 404)

    @contextlib.asynccontextmanager
    async def lifespan(app):
        poller = asyncio.create_task(_poll_forever(registry, poll_seconds)) if poll_seconds > 0 else None
        try:
            yield
        finally:
            if poller:
                poller.cancel()
            scheduler.shutdown()

    methods = ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"]
    return Starlette(
        routes=[
            Route("/v1/models/{rest:path}", models_endpoint, methods=methods),
            Route("/{rest:path}", unknown_path, methods=methods),
        ],
        lifespan=lifespan,
    )


async def _poll_forever(registry: ModelRegistry, poll_seconds: float):
    """Looks for a new version every `poll_seconds`; loading runs in a thread to keep serving."""
    while True:
        await asyncio.sleep(poll_seconds)
        try:
            await asyncio.to_thread(registry.poll)
        except Exception:  # e.g. the base path vanished for a moment: keep the served version.
            logging.exception("Polling %s failed", registry.model_base_path)


async def _handle_model_request(request, registry, scheduler, max_request_bytes) -> Response:
    match = _MODEL_PATH.fullmatch(request.path_params["rest"])
    body = await _read_body(request, max_request_bytes)
    if not match:
        raise NotFoundError(f"Malformed request: {request.method} {request.url.path}")
    name, version_text, action = match.group("name", "version", "action")
    version = None
    if version_text is not None:
        if not version_text.isdigit():
            raise NotFoundError(f"Malformed request: version {version_text!r} is not an integer")
        version = int(version_text)
    if action in (None, "/", "/metadata"):
        if request.method != "GET":
            raise MethodNotAllowedError(f"Method {request.method} not allowed for {request.url.path}; use GET")
        if action == "/metadata":
            return json_response(_metadata(registry, name, version))
        return json_response(_status(registry, name, version))
    if action != ":predict":
        raise NotFoundError(
            f"Malformed request: {request.method} {request.url.path}; zoo-serve supports ':predict' only"
        )
    if request.method != "POST":
        raise MethodNotAllowedError(f"Method {request.method} not allowed for {request.url.path}; use POST")
    model = registry.get(name, version)
    predict_request = json_tensor.parse_predict_request(body)
    signature = model.signatures.get(predict_request.signature_name)
    if signature is None:
        raise BadRequestError(
            f'Serving signature name: "{predict_request.signature_name}" not found in signature def; '
            f"available: {sorted(model.signatures)}"
        )
    arrays = json_tensor.request_to_arrays(predict_request, signature.inputs)
    outputs = await scheduler.predict(signature, arrays)
    return json_response(json_tensor.arrays_to_response(outputs, predict_request.format))


async def _read_body(request: Request, limit: int) -> bytes:
    """Reads the body; past `limit` bytes keeps draining (so the client reads our 413) and raises."""
    declared = request.headers.get("content-length", "")
    too_large = declared.isdigit() and int(declared) > limit
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            too_large = True
        if not too_large:
            chunks.append(chunk)
    if too_large:
        raise PayloadTooLargeError(
            f"Request body of {max(size, int(declared or 0))} bytes exceeds the limit of {limit} bytes "
            "(zoo-serve --max_request_bytes)"
        )
    return b"".join(chunks)


async def _drain(request: Request):
    async for _ in request.stream():
        pass


def _status(registry, name, version) -> dict:
    return {
        "model_version_status": [
            {
                "version": str(status.version),
                "state": status.state,
                "status": {"error_code": "OK", "error_message": status.error_message},
            }
            for status in registry.statuses(name, version)
        ]
    }


def _metadata(registry, name, version) -> dict:
    model = registry.get(name, version)
    return {
        "model_spec": {"name": name, "signature_name": "", "version": str(model.version)},
        "metadata": {"signature_def": {"signature_def": model.signature_defs}},
    }
