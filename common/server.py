"""The request loop both stdlib servers share, so dispatch, error mapping and writing have one owner.

The gateway (`backend/server.py`) and the RAG API (`rag_system/api/server.py`) differ in what a
request is (the gateway streams upload bodies; the RAG API reads a bounded body, may answer in SSE),
not in how it is answered: timed, its id echoed, a `DomainError` as its JSON answer, anything else a
500 naming the id, CORS for configured origins only, protocol errors and preflights in JSON too, an
unread body closing the connection, one JSON access line (the path without its query, never a body).
A service subclasses `JsonRequestHandler` and overrides the hooks; nothing here knows either service.
"""

from __future__ import annotations

import email.message
import logging
import socket
import time
from collections.abc import Iterable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar
from urllib.parse import unquote, urlsplit

from common.errors import ApiError, DomainError
from common.http import Response, Route, RouteTable, allowed_origin, request_id

#: The code of each refusal the stdlib makes before a route is known (bad request line, 414, 431, 501).
PROTOCOL_ERRORS = {400: "bad_request", 414: "uri_too_long", 431: "headers_too_large", 501: "method_not_implemented"}


class JsonHTTPServer(ThreadingHTTPServer):
    """One daemon thread per connection (a hung client never blocks exit); an IPv6 host binds IPv6."""

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 64
    #: Set by the service before serving: its routes, the origins that get CORS headers, its body limit.
    router: RouteTable
    cors_origins: Iterable[str] = ()
    body_limit: int | None = None

    def __init__(self, address: tuple[str, int], handler: type[JsonRequestHandler]) -> None:
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, handler)


class JsonRequestHandler(BaseHTTPRequestHandler):
    """Answers every request, protocol errors included, in JSON (or with the service's own stream)."""

    protocol_version = "HTTP/1.1"
    #: Seconds an idle keep-alive connection, a stalled body or an unread answer may hold a thread.
    timeout = 120
    service_name: ClassVar[str] = "service"  # named in a 500, so a report says whose log to read
    #: A preflight's `Access-Control-Allow-Headers`, an answer's `Access-Control-Expose-Headers`.
    allow_headers: ClassVar[str] = "Authorization, Content-Type, X-Request-ID"
    expose_headers: ClassVar[str] = "X-Request-ID"
    body_limit_setting: ClassVar[str] = ""  # named in a 413, so the message says how to raise the limit
    log: ClassVar[logging.Logger] = logging.getLogger(__name__)
    access_log: ClassVar[logging.Logger] = logging.getLogger(f"{__name__}.access")
    server: JsonHTTPServer

    # Hooks: what a service does its own way.
    def handle_route(self, route: Route, params: dict[str, str]) -> object:
        """Authorise and run the route: a `Response`, or what `send_stream` writes."""
        raise NotImplementedError

    def cors_credentials(self) -> bool:
        return False  # True: browsers may send cookies along (`Access-Control-Allow-Credentials`)

    def request_started(self) -> None:
        """Before routing (the gateway wraps its body stream and counts the request in flight)."""

    def observe(self, route_label: str, method: str, status: int, seconds: float) -> None:
        """After answering, once per request (metrics)."""

    def error_response(self, err: DomainError) -> Response:
        return Response.error(err)

    def body_settled(self) -> bool:
        """True when nothing of the body is left on the socket, so the connection can take the next request."""
        length = self.declared_length()
        return self.headers.get("Transfer-Encoding") is None and length is not None and self.bytes_in >= length

    def send_stream(self, result: object) -> int:
        """Write a result that is not a `Response` (the RAG API's SSE stream); the body bytes written."""
        raise TypeError(f"{type(result).__name__} is not a Response")

    def do_GET(self) -> None:  # noqa: N802 (the stdlib's naming)
        self._dispatch()

    do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = do_GET  # noqa: N815

    def _dispatch(self) -> None:
        started, sent = time.perf_counter(), 0
        # Set before any hook runs, for handlers to read: the decoded path, the raw query, the id, counts.
        split = urlsplit(self.path)
        self.url_path, self.query_string = unquote(split.path) or "/", split.query
        self.request_id = request_id(self.headers)
        self.client_host = self.client_address[0] if self.client_address else ""
        self.route_label, self.status, self.bytes_in = "unmatched", 0, 0
        self.request_started()
        try:
            result = self._answer()
            if not self.body_settled():
                self.close_connection = True  # an unread body would be taken for the next request
            sent = self.send(result) if isinstance(result, Response) else self.send_stream(result)
        except (BrokenPipeError, ConnectionResetError):  # the client went away: nobody is left to answer
            self.close_connection = True
            self.status = self.status or 499
        finally:
            seconds = time.perf_counter() - started
            self.observe(self.route_label, self.command, self.status, seconds)
            self.access_log.info("request", extra={
                "request_id": self.request_id, "method": self.command, "path": self.url_path,
                "route": self.route_label, "status": self.status, "duration_ms": round(seconds * 1000, 1),
                "bytes_in": self.bytes_in, "bytes_out": sent, "client": self.client_host})

    def _answer(self) -> object:
        method, rid = self.command, self.request_id
        try:
            if method == "OPTIONS":
                self.route_label = "preflight"
                return self.preflight()
            route, params = self.server.router.match(method, self.url_path)
            self.route_label = route.pattern
            return self.handle_route(route, params)
        except (BrokenPipeError, ConnectionResetError):
            raise
        except DomainError as err:
            if err.status >= 500:  # answered on purpose (a store too busy, a peer down): no traceback
                self.log.warning("%s %s: %s (request %s)", method, self.route_label, err, rid)
            return self.error_response(err)
        except Exception:
            self.log.exception("unhandled error in %s %s (request %s)", method, self.route_label, rid)
            return self.error_response(self.internal_error())

    def internal_error(self) -> ApiError:
        """A bug's answer: no detail, only the request id the traceback is logged under."""
        return ApiError(500, "internal_error", f"internal error in the {self.service_name}; quote request id "
                        f"{self.request_id} when reporting it", request_id=self.request_id)

    def preflight(self) -> Response:
        """From the route table: 404 for an unknown path, 403 for a foreign origin, no token asked (preflights
        carry none); an OPTIONS without `Origin` is not a CORS request and gets `Allow` alone."""
        methods = self.server.router.methods(self.url_path)
        if not methods:
            raise ApiError(404, "not_found", f"no route for {self.url_path}")
        origin = self.headers.get("Origin")
        if origin is not None and allowed_origin(self.headers, self.server.cors_origins) is None:
            raise ApiError(403, "origin_not_allowed", f"origin {origin!r} is not in DOCENT_CORS_ORIGINS")
        headers = {"Allow": ", ".join([*methods, "OPTIONS"])}
        if origin is not None:
            headers.update({"Access-Control-Allow-Methods": headers["Allow"], "Access-Control-Max-Age": "600",
                            "Access-Control-Allow-Headers": self.allow_headers})
        return Response(204, None, headers=headers)

    def declared_length(self) -> int | None:
        """The request's Content-Length: 0 when there is none, None when it is not a size."""
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            return None
        return length if length >= 0 else None

    def oversized(self, length: int) -> ApiError | None:
        """The 413 for a body of `length` bytes, or None when it is within `body_limit`."""
        limit = self.server.body_limit
        if limit is None or length <= limit:
            return None
        return ApiError(413, "body_too_large", f"the body is {length} bytes; the limit is {limit}"
                        + (f" ({self.body_limit_setting})" if self.body_limit_setting else ""))

    def handle_expect_100(self) -> bool:
        """`Expect: 100-continue`: an oversized body is refused before the client sends it."""
        if (refusal := self.oversized(self.declared_length() or 0)) is None:
            return super().handle_expect_100()
        self.close_connection, self.request_id = True, request_id(self.headers)
        self.send(Response.error(refusal))
        return False

    # Writing.
    def common_headers(self) -> dict[str, str]:
        """What every answer carries, JSON or stream: the request id, nosniff, CORS for configured origins."""
        headers = {"X-Request-ID": self.request_id, "X-Content-Type-Options": "nosniff"}
        origin = allowed_origin(self.headers, self.server.cors_origins)
        if origin:
            headers.update({"Access-Control-Allow-Origin": origin,
                            "Access-Control-Expose-Headers": self.expose_headers})
            if self.cors_credentials():
                headers["Access-Control-Allow-Credentials"] = "true"
        if self.headers.get("Origin"):
            headers["Vary"] = "Origin"  # the answer depends on the origin: a cache must not share it
        return headers

    def send(self, resp: Response) -> int:
        """Write `resp` (HEAD: headers only); the body bytes written. An iterable body without a length
        ends with the connection; a client gone mid-answer is logged, not raised."""
        self.status, body, sent = resp.status, resp.payload(), 0
        headers = {"Content-Type": resp.content_type, "Cache-Control": "no-store", **self.common_headers(),
                   **resp.headers}
        if resp.status == 204:
            headers.pop("Content-Type", None)  # no content: neither a type nor a length
        elif isinstance(body, bytes):
            headers["Content-Length"] = str(len(body))
        elif "Content-Length" not in headers:
            self.close_connection = True
        try:
            self.send_response(resp.status)
            for name, value in headers.items():
                self.send_header(name, str(value))
            if self.close_connection and "Connection" not in headers:
                self.send_header("Connection", "close")
            self.end_headers()
            for chunk in [] if self.command == "HEAD" else [body] if isinstance(body, bytes) else body:
                self.wfile.write(chunk)
                sent += len(chunk)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
            self.log.info("client went away before the response was sent (request %s)", self.request_id)
        finally:
            if callable(close := getattr(resp.body, "close", None)):
                close()
        return sent

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """Protocol-level errors as JSON too (not the stdlib's HTML page): clients parse one error shape."""
        self.close_connection = True
        if not hasattr(self, "headers"):
            self.headers = email.message.Message()  # the request line was too broken to read headers
        self.request_id = request_id(self.headers)
        self.send(Response.error(ApiError(code, PROTOCOL_ERRORS.get(code, f"http_{code}"),
                                          message or HTTPStatus(code).phrase)))

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the stdlib's signature)
        """The stdlib's stderr line per request is replaced by the JSON access log; the rest goes to debug."""
        self.log.debug("http: " + format, *args)
