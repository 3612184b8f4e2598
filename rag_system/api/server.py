"""The RAG API's HTTP server: `common.server`'s request loop plus what only the RAG API does.

A request body is read up front and bounded (chunked is 411, over `DOCENT_MAX_BODY_BYTES` 413
without being read); callers are the service or a person holding a gateway grant
(`rag_system.api.access`); a handler may answer with an SSE `Stream`, whose run-time failures
arrive as its terminal `error` frame.
"""

from __future__ import annotations

import logging
import threading
from urllib.parse import parse_qs

from common.errors import ApiError
from common.http import Response, Route, RouteTable
from common.net import bind_refusal
from common.server import JsonHTTPServer, JsonRequestHandler
from common.sse import SSEStream
from rag_system.api.access import SERVICE
from rag_system.api.app import Service
from rag_system.api.messages import Request, Stream
from rag_system.api.routes import access_of
from rag_system.api.routes import router as default_router
from rag_system.config import ConfigError


def check_bind(host: str, token: str) -> None:
    """A non-loopback bind without a service token is refused (`common.net.bind_refusal`)."""
    refusal = bind_refusal(host, token)
    if refusal:
        raise ConfigError(refusal)


class ApiServer(JsonHTTPServer):
    def __init__(self, address: tuple[str, int], service: Service, router: RouteTable | None = None) -> None:
        check_bind(address[0], service.access.token)
        super().__init__(address, ApiHandler)
        self.service, self.router, self.cors_origins = service, router or default_router(), service.cors_origins
        self.body_limit = service.settings.max_body_bytes

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        assert isinstance(host, str)  # getsockname() of an IP socket (the stub's type also admits bytes)
        return f"http://{host}:{port}"

    def serve_in_thread(self) -> threading.Thread:
        thread = threading.Thread(target=self.serve_forever, name="docent-rag-api", daemon=True)
        thread.start()
        return thread


class ApiHandler(JsonRequestHandler):
    server: ApiServer
    server_version = "DocentRAG/0.1"
    service_name = "RAG API"
    allow_headers = "Authorization, Content-Type, X-Request-ID, Last-Event-ID"
    body_limit_setting = "DOCENT_MAX_BODY_BYTES"
    log, access_log = logging.getLogger("rag_system.api"), logging.getLogger("rag_system.api.access")

    def observe(self, route_label: str, method: str, status: int, seconds: float) -> None:
        self.server.service.metrics.observe(route_label, method, status, seconds)

    def handle_route(self, route: Route, params: dict[str, str]) -> Response | Stream:
        service, method = self.server.service, self.command
        caller = SERVICE if route.public else service.access.caller(self.headers)
        if access_of(method, route.pattern) == "service":
            caller.require_service(f"{method} {route.pattern}")
        return route.handler(Request(method, self.url_path, params, parse_qs(self.query_string), self.headers,
                                     self._read_body(), self.request_id, service, caller))

    def _read_body(self) -> bytes:
        """The whole body, read only once it is known to be a bounded size (every refusal closes the connection)."""
        chunked = "chunked" in self.headers.get("Transfer-Encoding", "").lower()
        length = self.declared_length()
        if chunked or length is None:
            self.close_connection = True
            raise (ApiError(411, "length_required", "send the body with a Content-Length (chunked is not accepted)")
                   if chunked else ApiError(400, "invalid_content_length",
                                            f"Content-Length {self.headers.get('Content-Length')!r} is not a size"))
        if (refusal := self.oversized(length)) is not None:
            self.close_connection = True  # the body is never read, so the connection cannot be reused
            raise refusal
        try:
            body = self.rfile.read(length) if length else b""
        except TimeoutError:
            self.close_connection = True
            raise ApiError(408, "request_timeout", "the request body did not arrive in time") from None
        self.bytes_in = len(body)
        if len(body) < length:
            self.close_connection = True
            raise ApiError(400, "incomplete_body", f"the body ended after {len(body)} of {length} bytes")
        return body

    def send_stream(self, result: object) -> int:
        """An SSE `Stream`: headers at once, then frames as the pipeline makes them, then the connection closes."""
        assert isinstance(result, Stream), f"{type(result).__name__} is neither a Response nor a Stream"
        self.status, self.close_connection = 200, True
        self.send_response(200)
        for key, value in {"Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-cache",
                           "X-Accel-Buffering": "no", "Connection": "close", **self.common_headers(),
                           **result.headers}.items():
            self.send_header(key, value)
        self.end_headers()  # the writer is unbuffered: the client has the headers now
        sse = SSEStream(self.wfile, self.connection, self.server.service.settings.sse_heartbeat_s).start()
        try:
            result.run(sse)
        except Exception:
            self.log.exception("unhandled error in a stream (request %s)", self.request_id)
            sse.send("error", self.internal_error().to_json())
        finally:
            sse.close()
        return 0


def serve(service: Service, host: str, port: int) -> ApiServer:
    """Build the server (binding the port) and start the service's background threads."""
    server = ApiServer((host, port), service)
    service.start()
    return server


__all__ = ["ApiServer", "check_bind", "serve"]
