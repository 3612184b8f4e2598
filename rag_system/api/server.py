"""HTTP plumbing of the RAG API: parse, authorise, route, serialise, log, measure.

Standard library only (`ThreadingHTTPServer`, one thread per connection).
Every response carries `X-Request-Id`; every request produces one JSON log
line (route pattern, status, duration, request id — never bodies). Client
mistakes are 4xx JSON errors; an exception escaping a handler is a bug,
logged with its traceback and answered 500 with the request id.
"""

from __future__ import annotations

import hmac
import logging
import re
import socket
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from rag_system.api.app import Service
from rag_system.api.errors import ApiError
from rag_system.api.messages import Request, Response, Stream
from rag_system.api.routes import Router
from rag_system.api.sse import SSEStream
from rag_system.config import ConfigError, is_loopback

log = logging.getLogger("rag_system.api")
access = logging.getLogger("rag_system.api.access")

_REQUEST_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
ALLOW_HEADERS = "Authorization, Content-Type, X-Request-Id, Last-Event-ID"
PREFLIGHT_MAX_AGE = "600"


def check_bind(host: str, token: str) -> None:
    """A non-loopback bind without a service token is refused (DESIGN §1)."""
    if not is_loopback(host) and not token:
        raise ConfigError(f"refusing to listen on {host!r} without DOCENT_API_TOKEN: any machine that can "
                          "reach this address could read your documents; set DOCENT_API_TOKEN "
                          "(and give the gateway the same value) or bind 127.0.0.1")


class ApiServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 64

    def __init__(self, address: tuple[str, int], service: Service, router: Router | None = None) -> None:
        check_bind(address[0], service.settings.api_token)
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, ApiHandler)
        self.service = service
        self.router = router or Router()

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
        self.request_id = self._request_id()
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
            if route.auth:
                self._authorise()
            body = self._read_body()
            request = Request(method, path, params, parse_qs(urlsplit(self.path).query), self.headers, body,
                              self.request_id, service)
            result = route.handler(request)
            if isinstance(result, Stream):
                self._stream(result)
            else:
                self._send(result)
        except ApiError as exc:
            self._send(Response(exc.status, exc.to_json(), headers=exc.headers))
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
            self.status = self.status or 499
        except Exception:
            log.exception("unhandled error in %s %s", method, route_label, extra={"request_id": self.request_id})
            self._send(Response(500, {"error": {
                "code": "internal_error", "request_id": self.request_id,
                "message": f"internal error; quote request id {self.request_id} when reporting it"}}))
        finally:
            seconds = time.perf_counter() - started
            service.metrics.observe(route_label, method, self.status, seconds)
            access.info("request", extra={"request_id": self.request_id, "method": method, "route": route_label,
                                          "status": self.status, "duration_ms": round(seconds * 1000, 1),
                                          "bytes_in": self.bytes_in, "client": self.client_address[0]})

    def _request_id(self) -> str:
        given = self.headers.get("X-Request-Id", "")
        return given if _REQUEST_ID.match(given) else uuid.uuid4().hex

    def _authorise(self) -> None:
        token = self.server.service.settings.api_token
        if not token:
            return
        given = self.headers.get("Authorization", "")
        scheme, _, value = given.partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(value.strip().encode(), token.encode()):
            raise ApiError(401, "unauthorized", "missing or wrong bearer token (Authorization: Bearer <token>)",
                           {"WWW-Authenticate": 'Bearer realm="docent"'})

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
        origin = self.headers.get("Origin")
        if origin and origin.rstrip("/") in self.server.service.cors_origins:
            return {"Access-Control-Allow-Origin": origin, "Vary": "Origin",
                    "Access-Control-Expose-Headers": "X-Request-Id"}
        return {"Vary": "Origin"} if origin else {}

    def _preflight(self, path: str) -> None:
        origin = self.headers.get("Origin")
        methods = self.server.router.methods(path)
        if not methods:
            raise ApiError(404, "not_found", f"no route for {path}")
        if origin is not None and origin.rstrip("/") not in self.server.service.cors_origins:
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
        payload = b"" if response.status == 204 or response.body is None else response.encode()
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
            sse.send("error", {"code": "internal_error", "request_id": self.request_id,
                               "message": f"internal error; quote request id {self.request_id}"})
        finally:
            sse.close()


def serve(service: Service, host: str, port: int) -> ApiServer:
    """Build the server (binding the port) and start the service's background threads."""
    server = ApiServer((host, port), service)
    service.start()
    return server


__all__ = ["ApiServer", "check_bind", "serve"]
