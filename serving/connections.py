"""A deadline for a request's headers: a connection that sends none does not hold its place for good.

uvicorn closes a keep-alive connection that stays idle after an answer, but waits without end
for the headers of a request: the first one on a new connection, or one whose headers stop
half-way. Each such connection counts against `max_connections`, so a client that opens many
and sends nothing (by mistake or on purpose) would lock every other client out with 503s. Here
a connection gets `HEADER_TIMEOUT_SECONDS` (or the request timeout when that is shorter) to
complete the headers of each request; after that it is closed, as nginx and TF Serving's HTTP
server close such connections. The deadline ends when the headers are in (left running, it would
close a keep-alive connection between two requests, the next one perhaps already sent); the body
has its own deadline (`request_timeout_seconds`, 408), and an idle connection after an answer
uvicorn's keep-alive timeout.

A request that is not HTTP (a malformed request line, a `Content-Length` that is not a number)
gets a 400 with `{"error": ...}` as every other bad request does, where uvicorn answers in plain text.
"""

import json

from uvicorn.protocols.http.auto import AutoHTTPProtocol

HEADER_TIMEOUT_SECONDS = 10.0


def header_deadline_protocol(seconds):
    """uvicorn's HTTP protocol class with a deadline of `seconds` for each request's headers."""

    class HeaderDeadlineProtocol(AutoHTTPProtocol):
        def connection_made(self, transport):
            super().connection_made(transport)
            self._header_deadline = self._armed_after = None
            self._arm_header_deadline()

        def data_received(self, data):
            super().data_received(data)
            if self._awaiting_headers():
                self._arm_header_deadline()  # a new request's first bytes, after an answer
            else:  # its headers are in: the body and answer have the request timeout, and after
                self._disarm_header_deadline()  # the answer uvicorn's keep-alive timeout runs

        def send_400_response(self, msg):  # uvicorn's, for a request its HTTP parser refused; then it closes
            body = json.dumps({"error": "invalid HTTP request: expected an HTTP/1.1 request line and well-formed "
                                        "headers (a Content-Length a non-negative number)"}).encode()
            self.transport.write(b"HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\n"
                                 b"content-length: %d\r\nconnection: close\r\n\r\n%s" % (len(body), body))
            self.transport.close()

        def connection_lost(self, exc):
            self._disarm_header_deadline()
            super().connection_lost(exc)

        def _awaiting_headers(self):
            cycle = getattr(self, "cycle", None)
            return cycle is None or cycle.response_complete

        def _arm_header_deadline(self):
            """From the first bytes of each request (its cycle is the one of the answer before)."""
            if not self._awaiting_headers() or self.transport.is_closing():
                return
            cycle = getattr(self, "cycle", None)
            if self._header_deadline is not None and self._armed_after is cycle:
                return  # this request's deadline runs already
            self._disarm_header_deadline()
            self._header_deadline = self.loop.call_later(seconds, self._header_deadline_passed)
            self._armed_after = cycle

        def _disarm_header_deadline(self):
            if self._header_deadline is not None:
                self._header_deadline.cancel()
                self._header_deadline = None

        def _header_deadline_passed(self):
            self._header_deadline = None
            if self._awaiting_headers() and not self.transport.is_closing():
                self.transport.close()  # nothing to answer: no request has begun

    return HeaderDeadlineProtocol
