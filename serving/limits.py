"""The bounds that keep one client, or many, from taking `zoo-serve` down.

Each bound is a `zoo-serve` flag of the same name; past it a request gets an error at once
(`{"error": ...}`, except for uvicorn's own 503):

| bound | answer past it |
|---|---|
| `max_request_bytes` | 413; the body is read (and then discarded) only up to twice the limit |
| `max_sentences_per_request` | 413; checked before the inputs become tensors |
| `max_queued_requests` | 503: predict requests held at once (receiving, parsing, waiting, running) |
| `request_timeout_seconds` | 408 if the body is not in by then, else 504 |
| `max_connections` | 503 from uvicorn itself (plain text), and the connection is closed |
| (headers) | a connection that has not sent a request's headers within 10 s (or `request_timeout_seconds`, if shorter) is closed |

Together they bound memory: at most `max_queued_requests` bodies of `max_request_bytes`, and at
most `max_sentences_per_request` sentences in any one request.
"""

import dataclasses
import math
import zlib

from starlette.requests import ClientDisconnect, Request

from serving.errors import BadRequestError, PayloadTooLargeError
from serving.json_text import quoted


@dataclasses.dataclass(frozen=True)
class ServingLimits:
    """The bounds of one `zoo-serve` (see the module docstring for what each answers)."""

    max_request_bytes: int = 16 * 1024 * 1024
    max_sentences_per_request: int = 1024
    max_queued_requests: int = 128
    request_timeout_seconds: float = 60.0
    max_connections: int = 1024

    def __post_init__(self):
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if not (value > 0 and math.isfinite(value)):  # an infinite timeout would hold memory for good
                raise ValueError(f"--{field.name} must be a finite number > 0, got {value}")

    def uvicorn_options(self) -> dict:
        """Keyword arguments of `uvicorn.Config` that enforce the connection limit, and a deadline for each
        request's headers (`serving.connections`) so that silent connections cannot hold every place."""
        from serving.connections import HEADER_TIMEOUT_SECONDS, header_deadline_protocol

        deadline = min(HEADER_TIMEOUT_SECONDS, self.request_timeout_seconds)
        return {"limit_concurrency": self.max_connections, "http": header_deadline_protocol(deadline)}


async def read_body(request: Request, limit: int) -> bytes:
    """Reads the body, at most `limit` bytes of it; raises PayloadTooLargeError past that.

    A body over the limit is drained (read and dropped) up to twice the limit in all, so that a
    client sending a little too much still reads its 413; a larger one is cut off there and the
    connection closes after the answer.
    """
    declared = request.headers.get("content-length", "")
    declared = int(declared) if declared.isascii() and declared.isdigit() else 0
    if declared >= 2 * limit:  # it would be cut off anyway: answer now, not after waiting for the body
        raise _too_large(limit, f"; its Content-Length says {declared} bytes")
    body, received = bytearray(), 0
    async for chunk in request.stream():
        received += len(chunk)
        if declared > limit or received > limit:
            if received >= 2 * limit:
                break
            continue
        body += chunk
    if declared > limit or received > limit:
        raise _too_large(limit, f"; received {max(declared, received)} bytes or more")
    return decoded(bytes(body), request.headers.get("content-encoding", ""), limit)


def _too_large(limit: int, detail: str) -> PayloadTooLargeError:
    return PayloadTooLargeError(f"Request body exceeds the limit of {limit} bytes (zoo-serve --max_request_bytes){detail}")


def decoded(body: bytes, encoding: str, limit: int) -> bytes:
    """The body after its `Content-Encoding`: none, or gzip (as TF Serving's HTTP server reads it), at most
    `limit` bytes once inflated (PayloadTooLargeError past that: a small bomb stays small)."""
    encoding = encoding.strip().lower()
    if encoding in ("", "identity"):
        return body
    if encoding != "gzip":
        raise BadRequestError(f"Unsupported Content-Encoding {quoted(encoding)}; expected gzip or none")
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)  # the gzip container
    try:
        inflated = inflater.decompress(body, limit + 1)
    except zlib.error as error:
        raise BadRequestError(f"Content-Encoding gzip: the body is not valid gzip ({error})") from None
    if len(inflated) > limit:
        raise _too_large(limit, " once gzip-inflated")
    if not inflater.eof:
        raise BadRequestError("Content-Encoding gzip: the body ends before its gzip stream does")
    return inflated


async def drain(request: Request, budget: int) -> int:
    """Reads and drops the body, at most `budget` bytes; returns how many it read."""
    read = 0
    try:
        async for chunk in request.stream():
            read += len(chunk)
            if read >= budget:
                break
    except ClientDisconnect:  # Nobody left to answer: nothing more to drain.
        pass
    return read
