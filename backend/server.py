"""The gateway's HTTP server: `common.server`'s request loop plus what only the gateway does.

Request bodies are streamed (`backend.web.BodyStream`: uploads run to hundreds of MB) and an unread
rest is drained so the client sees the answer; every route is authorised by `backend.access`
(rate limits, an audit row for a change, with the details its handler's `Response.audit` gives);
`/v1/` errors take OpenAI's shape; login cookies make CORS answers allow credentials. Message text
never reaches the log at INFO.
"""

from __future__ import annotations

import logging
from typing import Any

from backend import routes
from backend.access import authorize
from backend.app import App
from backend.handlers_openai import openai_error
from backend.store import StoreUnavailableError
from backend.web import BodyStream, Request
from common.errors import DomainError
from common.http import Response, Route
from common.server import JsonHTTPServer, JsonRequestHandler

log = logging.getLogger("backend.server")

#: An unread body up to this size is dropped so the client sees the answer; a bigger one closes the connection.
DRAIN_LIMIT = 64 * 1024 * 1024


class GatewayServer(JsonHTTPServer):
    def __init__(self, address: tuple[str, int], app: App) -> None:
        app.config.check_bind(address[0], accounts=app.auth.enabled())
        self.app, self.router, self.cors_origins = app, routes.ROUTER, app.config.cors_origins
        self.body_limit = max(app.config.max_upload_bytes, app.config.max_json_bytes)
        super().__init__(address, GatewayHandler)


class GatewayHandler(JsonRequestHandler):
    server: GatewayServer
    server_version = "DocentGateway/0.1"
    service_name = "gateway"
    allow_headers = "Authorization, Content-Type, X-Request-ID, X-CSRF-Token"
    expose_headers = "X-Request-ID, Content-Disposition, X-Docent-Highlight"
    body_limit_setting = "DOCENT_MAX_UPLOAD_MB"
    log, access_log = log, logging.getLogger("backend.access")

    def cors_credentials(self) -> bool:
        return self.server.app.auth.enabled()  # the web app sends its login cookie

    def request_started(self) -> None:
        self.bytes_in = self.declared_length() or 0  # the declared size: handlers read the body themselves
        self.body = BodyStream(self.rfile, self.bytes_in)
        self.server.app.metrics.started()

    def observe(self, route_label: str, method: str, status: int, seconds: float) -> None:
        self.server.app.metrics.finished(method, route_label, status, seconds)

    def handle_route(self, route: Route, params: dict[str, str]) -> Response:
        app, method = self.server.app, self.command
        principal = app.auth.authenticate(self.headers, method, route.public)
        allowed = authorize(app.store, principal, method, route.pattern, params)
        rule = allowed.rule
        if rule.limit and principal.kind == "user":
            app.auth.limiter.hit(rule.limit, principal.user_id or "")
        req = Request(method=method, path=self.url_path, query_string=self.query_string, headers=self.headers,
                      request_id=self.request_id, rfile=self.body, max_json_bytes=app.config.max_json_bytes,
                      params=dict(allowed.params), principal=principal, client=self.client_host)
        resp = route.handler(app, req)
        if rule.audit and resp.status < 400:
            _audit(app, principal.label, rule.audit, allowed.params.get(rule.target, ""), self.client_host,
                   {"route": route.pattern, **resp.audit})
        return resp

    def error_response(self, err: DomainError) -> Response:
        if err.code.startswith("rag_api"):
            self.server.app.metrics.rag_error(err.code)
        return openai_error(err) if self.url_path.startswith("/v1/") else Response.error(err)

    def body_settled(self) -> bool:
        """Chunked bodies are not read at all; the rest of a declared one is drained up to `DRAIN_LIMIT`."""
        try:
            return self.headers.get("Transfer-Encoding") is None and self.body.drain(DRAIN_LIMIT)
        except OSError:  # the client is gone or stalled
            return False


def _audit(app: App, actor: str, action: str, target: str, client: str, detail: dict[str, Any]) -> None:
    """The audit row of a change that has already happened: a store too busy to take it is logged, and
    the answer stays the success it is (failing it would invite a retry of the change itself)."""
    try:
        app.store.audit(actor, action, target, client, detail)
    except StoreUnavailableError as exc:
        log.error("audit row %s %s not written: %s", action, target, exc)


def serve(app: App, host: str, port: int) -> GatewayServer:
    """Bind (refusing a non-loopback address without a token) and return the server, not yet serving."""
    return GatewayServer((host, port), app)
