"""HTTP server: stdlib ThreadingHTTPServer, auth, CORS, request ids, one JSON log line per request.

Handlers are looked up in `backend.routes.TABLE`; every `common.errors.DomainError`
they raise (an `ApiError`, a busy or full store) becomes `{"error": {"code", "message"}}`
with its own status; anything else is logged with its traceback and answered 500
`internal_error` naming the request id.
Message text never reaches the log at INFO: the access line has the path
(without the query string), status, sizes and timings only.
"""

from __future__ import annotations

import email.message
import logging
import time
from collections.abc import Iterable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote, urlsplit

from backend import routes
from backend.access import authorize
from backend.app import App
from backend.handlers_openai import openai_error
from backend.store import StoreUnavailableError
from backend.web import BodyStream, Request
from common.errors import ApiError, DomainError
from common.http import Response, allowed_origin, request_id

access_log = logging.getLogger("backend.access")
log = logging.getLogger("backend.server")

_ALLOW_HEADERS = "Authorization, Content-Type, X-Request-ID, X-CSRF-Token"
_EXPOSE_HEADERS = "X-Request-ID, Content-Disposition"
#: An unread request body up to this size is read and dropped so the client sees the response
#: (not a broken pipe); a bigger one closes the connection instead.
DRAIN_LIMIT = 64 * 1024 * 1024


class GatewayServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 64

    def __init__(self, address: tuple[str, int], app: App) -> None:
        app.config.check_bind(address[0], accounts=app.auth.enabled())
        self.app = app
        super().__init__(address, GatewayHandler)


class GatewayHandler(BaseHTTPRequestHandler):
    server: GatewayServer
    server_version = "DocentGateway/0.1"
    protocol_version = "HTTP/1.1"
    timeout = 120  # seconds a socket read may stall before the connection is dropped

    def do_GET(self) -> None:  # noqa: N802 (stdlib naming)
        self._dispatch()

    def do_HEAD(self) -> None:  # noqa: N802
        self._dispatch()

    def do_POST(self) -> None:  # noqa: N802
        self._dispatch()

    def do_DELETE(self) -> None:  # noqa: N802
        self._dispatch()

    def do_PUT(self) -> None:  # noqa: N802
        self._dispatch()

    def do_PATCH(self) -> None:  # noqa: N802
        self._dispatch()

    def do_OPTIONS(self) -> None:  # noqa: N802
        """CORS preflight: allowed only for the configured origins."""
        rid = request_id(self.headers)
        origin = allowed_origin(self.headers, self.server.app.config.cors_origins)
        path = unquote(urlsplit(self.path).path)
        methods = routes.allowed_methods(path)
        if origin is None or not methods:
            resp = Response.error(ApiError(403, "cors_forbidden", "origin not allowed or unknown path"))
        else:
            resp = Response(204, b"", headers={"Access-Control-Allow-Methods": ", ".join([*methods, "OPTIONS"]),
                                               "Access-Control-Allow-Headers": _ALLOW_HEADERS,
                                               "Access-Control-Max-Age": "600"})
        self._send(resp, rid)

    # -- dispatch --------------------------------------------------------------
    def _dispatch(self) -> None:
        app = self.server.app
        t0 = time.perf_counter()
        rid = request_id(self.headers)
        split = urlsplit(self.path)
        path = unquote(split.path)
        method = self.command
        route_label = "unmatched"
        body = BodyStream(self.rfile, self._length())
        app.metrics.started()
        try:
            route, params = routes.match(method, path)
            route_label = route.pattern
            client = self.client_address[0] if self.client_address else ""
            principal = app.auth.authenticate(self.headers, method, route.public)
            rule = authorize(app.store, principal, method, route.pattern, params)
            if rule.limit and principal.kind == "user":
                app.auth.limiter.hit(rule.limit, principal.user_id or "")
            req = Request(method=method, path=path, query_string=split.query, headers=self.headers,
                          request_id=rid, rfile=body, max_json_bytes=app.config.max_json_bytes, params=params,
                          principal=principal, client=client)
            resp = route.handler(app, req)
            if rule.audit and resp.status < 400:
                _audit(app, principal.label, rule.audit, params.get(rule.target, ""), client,
                       {"route": route.pattern, **req.audit})
        except DomainError as err:
            resp = openai_error(err) if path.startswith("/v1/") else Response.error(err)
            if err.code.startswith("rag_api"):
                app.metrics.rag_error(err.code)
            if err.status >= 500:
                log.warning("%s %s: %s (request %s)", method, route_label, err, rid)
        except Exception:
            log.exception("unhandled error in %s %s (request %s)", method, route_label, rid)
            resp = Response.error(ApiError(500, "internal_error", f"internal error; see the gateway log, "
                                                                  f"request id {rid}"))
        if self.headers.get("Transfer-Encoding") is not None or not _drained(body):
            # An unread request body would be taken for the next request: close instead.
            self.close_connection = True
            resp.headers["Connection"] = "close"
        sent = self._send(resp, rid, head_only=method == "HEAD")
        elapsed = time.perf_counter() - t0
        app.metrics.finished(method, route_label, resp.status, elapsed)
        access_log.info("request", extra={
            "request_id": rid, "method": method, "path": path, "route": route_label, "status": resp.status,
            "duration_ms": round(elapsed * 1000, 1), "bytes_in": self._length(), "bytes_out": sent,
            "client": self.client_address[0] if self.client_address else None})

    def _length(self) -> int:
        try:
            return max(0, int(self.headers.get("Content-Length", "0")))
        except ValueError:
            return 0

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """Protocol-level errors (bad request line, unsupported method, huge headers) as JSON too."""
        self.close_connection = True
        if not hasattr(self, "headers"):
            self.headers = email.message.Message()  # the request line was too broken to read headers
        text = message or HTTPStatus(code).phrase
        code_name = {400: "bad_request", 414: "uri_too_long", 431: "headers_too_large",
                     501: "method_not_implemented"}.get(code, f"http_{code}")
        self._send(Response.error(ApiError(code, code_name, text)), request_id(self.headers))

    def handle_expect_100(self) -> bool:
        """`Expect: 100-continue`: refuse an oversized body before the client sends it."""
        limit = max(self.server.app.config.max_upload_bytes, self.server.app.config.max_json_bytes)
        if self._length() > limit:
            err = ApiError(413, "body_too_large", f"request body is {self._length()} bytes; the limit is {limit}")
            self.close_connection = True
            self._send(Response.error(err), request_id(self.headers))
            return False
        return super().handle_expect_100()

    def _send(self, resp: Response, rid: str, head_only: bool = False) -> int:
        sent = 0
        try:
            self.send_response(resp.status)
            headers: dict[str, Any] = {"Content-Type": resp.content_type, "X-Request-ID": rid,
                                       "X-Content-Type-Options": "nosniff", "Cache-Control": "no-store"}
            headers.update(resp.headers)
            origin = allowed_origin(self.headers, self.server.app.config.cors_origins)
            if origin:
                headers.update({"Access-Control-Allow-Origin": origin, "Vary": "Origin",
                                "Access-Control-Expose-Headers": _EXPOSE_HEADERS})
                if self.server.app.auth.enabled():  # the web app sends its login cookie
                    headers["Access-Control-Allow-Credentials"] = "true"
            body = resp.payload()
            if isinstance(body, bytes):
                headers["Content-Length"] = str(len(body))
            elif "Content-Length" not in headers:
                headers["Connection"] = "close"
                self.close_connection = True
            for name, value in headers.items():
                self.send_header(name, str(value))
            self.end_headers()
            if head_only:
                return 0
            chunks: Iterable[bytes] = [body] if isinstance(body, bytes) else body
            for chunk in chunks:
                self.wfile.write(chunk)
                sent += len(chunk)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
            log.info("client went away before the response was sent (request %s)", rid)
        finally:
            close = getattr(resp.body, "close", None)
            if callable(close):
                close()
        return sent

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        """The stdlib's per-request stderr line is replaced by the JSON access log."""
        log.debug(format, *args)


def _audit(app: App, actor: str, action: str, target: str, client: str, detail: dict[str, Any]) -> None:
    """The audit row of a change that has already happened: a store too busy to take it is logged, and
    the answer stays the success it is (failing it would invite a retry of the change itself)."""
    try:
        app.store.audit(actor, action, target, client, detail)
    except StoreUnavailableError as exc:
        log.error("audit row %s %s not written: %s", action, target, exc)


def _drained(body: BodyStream) -> bool:
    try:
        return body.drain(DRAIN_LIMIT)
    except OSError:  # the client is gone or stalled
        return False


def serve(app: App, host: str, port: int) -> GatewayServer:
    """Bind (refusing a non-loopback address without a token) and return the server, not yet serving."""
    return GatewayServer((host, port), app)
