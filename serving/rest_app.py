"""The REST API of TF Serving, as a Starlette app: what `zoo-serve` runs.

Endpoints (`{name}` is the model name, `/versions/{v}` is optional everywhere):

- `GET  /v1/models/{name}[/versions/{v}]`: model status (`model_version_status`), plus `ready`
  (true while a version is AVAILABLE), which KServe's V1 readiness check reads.
- `GET  /v1/models/{name}[/versions/{v}]/metadata`: signature defs (`metadata.signature_def`).
- `POST /v1/models/{name}[/versions/{v}]:predict`: row (`instances`) or columnar (`inputs`)
  request, see `serving.json_tensor`.
- `GET  /`: `{"status": "alive"}`, KServe's V1 liveness check.

Every failure answers `{"error": "..."}` in plain words (never a Python repr or traceback): 400
for a bad request body, an unknown signature or a TensorFlow InvalidArgument, 404 for an unknown
model, version or path, 405 for a wrong method, 408/413/503/504 past the bounds of
`serving.limits`, 500 for internal errors (details in the server log). The connection stays usable.

JSON parsing, the conversion to tensors and the encoding of the answer run in worker threads, so
a large request does not hold up status checks or other requests.
"""

import asyncio
import concurrent.futures
import contextlib
import logging
import os
import re

from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.routing import Route

from serving import json_tensor
from serving.batching import BatchScheduler
from serving.errors import (
    BadRequestError,
    DeadlineExceededError,
    MethodNotAllowedError,
    NotFoundError,
    OverloadedError,
    PayloadTooLargeError,
    RequestTimeoutError,
    ServingError,
)
from serving.json_text import dumps, quoted, quoted_list
from serving.limits import ServingLimits, drain, read_body
from serving.model_registry import ModelRegistry

_MODEL_PATH = re.compile(
    r"(?P<name>[^/:]+)(?:/versions/(?P<version>[^/:]+))?(?P<action>/metadata|:[A-Za-z]+)?/?"
)


def json_response(content, status_code: int = 200, close: bool = False, headers=None) -> Response:
    # TF Serving writes UTF-8 text and NaN/Infinity as is; starlette's JSONResponse refuses NaN.
    headers = dict(headers or {})
    if close:
        headers["connection"] = "close"  # uvicorn then stops reading an unread body
    return Response(dumps(content), status_code=status_code, media_type="application/json", headers=headers or None)


def create_app(
    registry: ModelRegistry,
    limits: ServingLimits = None,
    poll_seconds: float = 1.0,
    scheduler: BatchScheduler = None,
) -> Starlette:
    """Builds the app serving `registry`'s model.

    Args:
        registry: the model (already polled once if it should serve right away).
        limits: the bounds of `serving.limits`; default `ServingLimits()`.
        poll_seconds: how often to look for a new version under the model base path; 0 disables.
        scheduler: runs predictions; default `BatchScheduler()`.
    """
    limits = limits or ServingLimits()
    scheduler = scheduler or BatchScheduler()
    requests = ModelRequests(registry, scheduler, limits)

    async def models_endpoint(request: Request) -> Response:
        try:
            return await requests.handle(request)
        except ServingError as error:
            return json_response({"error": error.message}, error.status_code, error.close_connection,
                                 error.headers())
        except ClientDisconnect:  # Nobody reads this answer; it only ends the exchange.
            return json_response({"error": "The client disconnected before sending the whole request"}, 400)
        except Exception:  # Last resort: answer, log, keep serving.
            logging.exception("Unhandled error for %s %s", request.method, request.url.path)
            return json_response({"error": "Internal error; the zoo-serve log has the details"}, 500)

    async def other_paths(request: Request) -> Response:
        await drain(request, limits.max_request_bytes)
        if request.url.path == "/" and request.method == "GET":
            return json_response({"status": "alive"})
        return json_response({"error": f"Malformed request: {request.method} {request.url.path[:200]}"}, 404)

    @contextlib.asynccontextmanager
    async def lifespan(app):
        poller = asyncio.create_task(_poll_forever(registry, poll_seconds)) if poll_seconds > 0 else None
        try:
            yield
        finally:
            if poller:
                poller.cancel()
            scheduler.shutdown()
            requests.shutdown()

    methods = ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"]
    return Starlette(
        routes=[
            Route("/v1/models/{rest:path}", models_endpoint, methods=methods),
            Route("/{rest:path}", other_paths, methods=methods),
        ],
        lifespan=lifespan,
    )


async def _poll_forever(registry: ModelRegistry, poll_seconds: float):
    """Looks for a new version every `poll_seconds`; loading runs in a thread to keep serving."""
    last_failure = None
    while True:
        await asyncio.sleep(poll_seconds)
        try:
            await asyncio.to_thread(registry.poll)
            last_failure = None
        except Exception as error:  # The registry logs what it expects; this is the unexpected, logged once.
            failure = f"{type(error).__name__}: {error}"
            if failure != last_failure:
                logging.exception("Polling %s failed; still serving the current version", registry.model_base_path)
            last_failure = failure


class ModelRequests:
    """Answers `/v1/models/...` requests within `limits`.

    Args:
        registry: the served model.
        scheduler: runs the signatures.
        limits: the bounds of `serving.limits`.
    """

    def __init__(self, registry: ModelRegistry, scheduler: BatchScheduler, limits: ServingLimits):
        self.registry = registry
        self.scheduler = scheduler
        self.limits = limits
        self.held = 0  # predict requests between admission and answer; only the event loop touches it
        # JSON holds the GIL while it parses: a few threads are enough, and bound parsing memory.
        self._pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=max(1, min(4, os.cpu_count() or 1)), thread_name_prefix="json"
        )

    def shutdown(self):
        self._pool.shutdown(wait=False, cancel_futures=True)

    async def handle(self, request: Request) -> Response:
        match = _MODEL_PATH.fullmatch(request.path_params["rest"])
        action = match.group("action") if match else None
        if not (action == ":predict" and request.method == "POST"):
            await drain(request, self.limits.max_request_bytes)
        if not match:
            raise NotFoundError(f"Malformed request: {request.method} {request.url.path[:200]}")
        name, version_text = match.group("name", "version")
        version = None
        if version_text is not None:
            if not (version_text.isascii() and version_text.isdigit()):  # "²" and "١" are digits to Python
                raise NotFoundError(f"Malformed request: version {quoted(version_text)} is not an integer")
            version = int(version_text)
        if action in (None, "/", "/metadata"):
            if request.method != "GET":
                raise MethodNotAllowedError(
                    f"Method {request.method} not allowed for {request.url.path}; use GET", allow="GET"
                )
            if action == "/metadata":
                return json_response(_metadata(self.registry, name, version))
            return json_response(_status(self.registry, name, version))
        if action != ":predict":
            raise NotFoundError(
                f"Malformed request: {request.method} {request.url.path[:200]}; zoo-serve supports only :predict"
            )
        if request.method != "POST":
            raise MethodNotAllowedError(
                f"Method {request.method} not allowed for {request.url.path}; use POST", allow="POST"
            )
        return await self._predict(request, name, version)

    async def _predict(self, request: Request, name: str, version) -> Response:
        limits = self.limits
        if self.held >= limits.max_queued_requests:
            await drain(request, limits.max_request_bytes)
            raise OverloadedError(
                f"zoo-serve already holds {self.held} predict requests (--max_queued_requests="
                f"{limits.max_queued_requests}); retry later"
            )
        self.held += 1
        try:
            loop = asyncio.get_running_loop()
            deadline = loop.time() + limits.request_timeout_seconds
            try:
                body = await asyncio.wait_for(read_body(request, limits.max_request_bytes),
                                              limits.request_timeout_seconds)
            except asyncio.TimeoutError:
                raise RequestTimeoutError(
                    f"The request body did not arrive within {limits.request_timeout_seconds:g} s "
                    "(zoo-serve --request_timeout_seconds)"
                ) from None
            model = self.registry.get(name, version)
            try:
                return await asyncio.wait_for(self._answer(model, body), max(deadline - loop.time(), 0.001))
            except asyncio.TimeoutError:
                raise DeadlineExceededError(
                    f"No answer within {limits.request_timeout_seconds:g} s (zoo-serve --request_timeout_seconds)"
                ) from None
        finally:
            self.held -= 1

    async def _answer(self, model, body: bytes) -> Response:
        loop = asyncio.get_running_loop()
        signature, arrays, request_format = await loop.run_in_executor(
            self._pool, prepare_predict, model, body, self.limits.max_sentences_per_request
        )
        outputs = await self.scheduler.predict(signature, arrays)
        content = await loop.run_in_executor(self._pool, encode_answer, outputs, request_format)
        return Response(content, media_type="application/json")


def prepare_predict(model, body: bytes, max_sentences: int) -> tuple:
    """A predict body -> (signature, input name -> array, request format); raises ServingError."""
    predict_request = json_tensor.parse_predict_request(body)
    signature = model.signatures.get(predict_request.signature_name)
    if signature is None:
        raise BadRequestError(
            f"Serving signature name: {quoted(predict_request.signature_name, 100)} not found in signature def; "
            f"available: {quoted_list(sorted(model.signatures))}"
        )
    examples = json_tensor.batch_size(predict_request)
    if examples is not None and examples > max_sentences:
        raise PayloadTooLargeError(
            f"Request holds {examples} examples; zoo-serve takes at most {max_sentences} per request "
            "(--max_sentences_per_request): split it"
        )
    return signature, json_tensor.request_to_arrays(predict_request, signature.inputs), predict_request.format


def encode_answer(outputs: dict, request_format: str) -> bytes:
    return dumps(json_tensor.arrays_to_response(outputs, request_format))


def _status(registry, name, version) -> dict:
    statuses = registry.statuses(name, version)
    return {
        "model_version_status": [
            {
                "version": str(status.version),
                "state": status.state,
                "status": {"error_code": status.error_code, "error_message": status.error_message},
            }
            for status in statuses
        ],
        "ready": any(status.state == "AVAILABLE" for status in statuses),
    }


def _metadata(registry, name, version) -> dict:
    model = registry.get(name, version)
    return {
        "model_spec": {"name": name, "signature_name": "", "version": str(model.version)},
        "metadata": {"signature_def": {"signature_def": model.signature_defs}},
    }
