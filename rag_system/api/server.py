"""HTTP plumbing of the RAG API: parse, authorise, route, serialise, log, measure.

Standard library only (`ThreadingHTTPServer`, one thread per connection).
Every response carries `X-Request-Id`; every request produces one JSON log
line (route pattern, status, duration, request id — never bodies). Client
mistakes are 4xx JSON errors; an exception escaping a handler is a bug,
logged with its traceback and answered 500 with the request id.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from common.errors import ApiError, DomainError, error_body
from common.http import Response, RouteTable, allowed_origin, request_id
from common.net import bind_refusal
from common.sse import SSEStream
from rag_system.api.access import SERVICE
from rag_system.api.app import Service
from rag_system.api.messages import Request, Stream
from rag_system.api.routes import access_of
from rag_system.api.routes import router as default_router
from rag_system.config import ConfigError

log = logging.getLogger("rag_system.api")
access = logging.getLogger("rag_system.api.access")

ALLOW_HEADERS = "Authorization, Content-Type, X-Request-Id, Last-Event-ID"
PREFLIGHT_MAX_AGE = "600"


def check_bind(host: str, token: str) -> None:
    """A non-loopback bind without a service token is refused (`common.net.bind_refusal`)."""
    refusal = bind_refusal(host, token)
    if refusal:
        raise ConfigError(refusal)


class ApiServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 64

    def __init__(self, address: tuple[str, int], service: Service, router: RouteTable | None = None) -> None:
        check_bind(address[0], service.gate.token)
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, ApiHandler)
        self.service = service
        self.router = router or default_router()

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}"

    def serve_in_thread(self) -> threading.Thread:
        thread = threading.Thread(target=self.serve_forever, name="docent-rag-api", daemon=True)
        thread.start()
        return thread


class ApiHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "DocentRAG/0.1"
    #: Socket timeout: an idle keep-alive connection (or a client that stops
    #: sending its body, or stops reading a stream) frees its thread after this.
    timeout = 120
    server: ApiServer

    def do_GET(self) -> None:  # noqa: N802 - http.server naming
        self._dispatch()

    do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = do_GET  # noqa: N815

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - base signature
        log.debug("http: " + format, *args)

    # -- one request --------------------------------------------------------------
    def _dispatch(self) -> None:
        started = time.perf_counter()
        service = self.server.service
        self.request_id = request_id(self.headers)
        self.status = 0
        self.bytes_in = 0
        route_label = "unmatched"
        method = self.command
        path = urlsplit(self.path).path or "/"
        try:
            if method == "OPTIONS":
                route_label = "preflight"
                self._preflight(path)
                return
            route, params = self.server.router.match(method, path)
            route_label = route.pattern
            caller = SERVICE if route.public else service.gate.caller(self.headers)
            if access_of(method, route.pattern) == "service":
                caller.require_service(f"{method} {route.pattern}")
            body = self._read_body()
            request = Request(method, path, params, parse_qs(urlsplit(self.path).query), self.headers, body,
                              self.request_id, service, caller)
            result = route.handler(request)
            if isinstance(result, Stream):
                self._stream(result)
            else:
                self._send(result)
        except DomainError as exc:
            if exc.status >= 500:
                log.error("%s %s: %s", method, route_label, exc, extra={"request_id": self.request_id})
            self._send(Response.error(exc))
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
            self.status = self.status or 499
        except Exception:
            log.exception("unhandled error in %s %s", method, route_label, extra={"request_id": self.request_id})
            self._send(Response(500, error_body(
                "internal_error", f"internal error; quote request id {self.request_id} when reporting it",
                request_id=self.request_id)))
        finally:
            seconds = time.perf_counter() - started
            service.metrics.observe(route_label, method, self.status, seconds)
            access.info("request", extra={"request_id": self.request_id, "method": method, "route": route_label,
                                          "status": self.status, "duration_ms": round(seconds * 1000, 1),
                                          "bytes_in": self.bytes_in, "client": self.client_address[0]})

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            self.close_connection = True
            raise ApiError(411, "length_required", "send the body with a Content-Length (chunked is not accepted)")
        raw = self.headers.get("Content-Length")
        if raw is None:
            return b""
        try:
            length = int(raw)
            if length < 0:
                raise ValueError(raw)
        except ValueError:
            self.close_connection = True
            raise ApiError(400, "invalid_content_length", f"Content-Length {raw!r} is not a size") from None
        limit = self.server.service.settings.max_body_bytes
        if length > limit:
            self.close_connection = True  # the body is never read; the connection cannot be reused
            raise ApiError(413, "body_too_large", f"the body is {length} bytes; the limit is {limit} "
                                                  "(DOCENT_MAX_BODY_BYTES)")
        try:
            body = self.rfile.read(length)
        except TimeoutError:
            self.close_connection = True
            raise ApiError(408, "request_timeout", "the request body did not arrive in time") from None
        self.bytes_in = len(body)
        if len(body) < length:
            self.close_connection = True
            raise ApiError(400, "incomplete_body", f"the body ended after {len(body)} of {length} bytes")
        return body

    # -- CORS -------------------------------------------------------------------------
    def _cors_headers(self) -> dict[str, str]:
        origin = allowed_origin(self.headers, self.server.service.cors_origins)
        if origin:
            return {"Access-Control-Allow-Origin": origin, "Vary": "Origin",
                    "Access-Control-Expose-Headers": "X-Request-Id"}
        return {"Vary": "Origin"} if self.headers.get("Origin") else {}

    def _preflight(self, path: str) -> None:
        origin = self.headers.get("Origin")
        methods = self.server.router.methods(path)
        if not methods:
            raise ApiError(404, "not_found", f"no route for {path}")
        if origin is not None and allowed_origin(self.headers, self.server.service.cors_origins) is None:
            raise ApiError(403, "origin_not_allowed", f"origin {origin!r} is not in DOCENT_CORS_ORIGINS")
        headers = {"Allow": ", ".join([*methods, "OPTIONS"])}
        if origin is not None:
            headers.update({"Access-Control-Allow-Methods": ", ".join([*methods, "OPTIONS"]),
                            "Access-Control-Allow-Headers": ALLOW_HEADERS,
                            "Access-Control-Max-Age": PREFLIGHT_MAX_AGE})
        self._read_body()
        self._send(Response(204, None, headers=headers))

    # -- writing ----------------------------------------------------------------------
    def _send(self, response: Response) -> None:
        payload = response.payload()
        assert isinstance(payload, bytes), "the RAG API streams through Stream, not a Response body"
        self.status = response.status
        self.send_response(response.status)
        headers = {"Content-Type": response.content_type, "X-Request-Id": self.request_id,
                   "Cache-Control": "no-store", **self._cors_headers(), **response.headers}
        if response.status == 204:
            headers.pop("Content-Type", None)
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(payload)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD" and payload:
            self.wfile.write(payload)

    def _stream(self, stream: Stream) -> None:
        self.status = 200
        self.close_connection = True
        self.send_response(200)
        headers = {"Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-cache",
                   "X-Accel-Buffering": "no", "Connection": "close", "X-Request-Id": self.request_id,
                   **self._cors_headers(), **stream.headers}
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.flush()
        sse = SSEStream(self.wfile, self.connection, self.server.service.settings.sse_heartbeat_s).start()
        try:
            stream.run(sse)
        except Exception:
            log.exception("unhandled error in a stream", extra={"request_id": self.request_id})
            sse.send("error", error_body("internal_error", f"internal error; quote request id {self.request_id}",
                                         request_id=self.request_id))
        finally:
            sse.close()


def serve(service: Service, host: str, port: int) -> ApiServer:
    """Build the server (binding the port) and start the service's background threads."""
    server = ApiServer((host, port), service)
    service.start()
    return server


__all__ = ["ApiServer", "check_bind", "serve"]
