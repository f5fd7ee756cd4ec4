"""Errors that become `{"error": message}` answers with an HTTP status, on server and client."""


class ServingError(Exception):
    """A failed request: `message` is the `"error"` text, `status_code` the HTTP status."""

    status_code = 500
    close_connection = False  # True when the body may be left unread: the server closes after answering.

    def __init__(self, message: str, status_code=None):
        super().__init__(message)
        self.message = message
        if status_code is not None:
            self.status_code = status_code

    def __str__(self):
        return f"HTTP {self.status_code}: {self.message}"

    def headers(self) -> dict:
        """The headers the answer carries besides its JSON body's (none by default)."""
        return {}


class BadRequestError(ServingError):
    status_code = 400


class NotFoundError(ServingError):
    status_code = 404


class MethodNotAllowedError(ServingError):
    """A route asked with the wrong method; `allow` is the method it takes, sent as the `Allow` header (RFC 9110
    requires one on a 405 answer)."""

    status_code = 405

    def __init__(self, message: str, allow: str):
        super().__init__(message)
        self.allow = allow

    def headers(self) -> dict:
        return {"allow": self.allow}


class RequestTimeoutError(ServingError):
    """The client did not finish sending its request in time."""

    status_code = 408
    close_connection = True


class PayloadTooLargeError(ServingError):
    status_code = 413
    close_connection = True


class OverloadedError(ServingError):
    """Too many requests held already; TF Serving answers UNAVAILABLE (503) when its queue is full."""

    status_code = 503


class DeadlineExceededError(ServingError):
    """The answer took longer than the per-request timeout."""

    status_code = 504
