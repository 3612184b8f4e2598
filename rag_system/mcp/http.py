"""The MCP server over streamable HTTP, behind the same credentials as the gateway and the RAG API.

Every HTTP request needs `Authorization: Bearer <token>`; before the MCP layer sees it, the token is
tried against Docent itself (`Docent.list_indexes` with that token: the gateway for a person's
`dpt_…` token, the RAG API for the service token or a grant), so a missing, wrong, revoked or
disabled credential is a 401/403 here, and the tools then run with that same token.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import anyio

from rag_system.mcp.docent import Docent, DocentError
from rag_system.mcp.server import build_server

log = logging.getLogger(__name__)

Scope = dict[str, Any]


def bearer(headers: Any) -> str:
    scheme, _, token = (headers.get("authorization") or "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


class BearerRequired:
    """ASGI middleware: refuse an HTTP request whose bearer Docent does not accept."""

    def __init__(self, app: Any, rag_url: str, gateway_url: str) -> None:
        self.app, self.rag_url, self.gateway_url = app, rag_url, gateway_url

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        token = bearer(headers)
        if not token:
            await _refuse(send, 401, "unauthorized", "send Authorization: Bearer <token> (a personal API token, "
                          "or the service token)")
            return
        try:
            await anyio.to_thread.run_sync(Docent(self.rag_url, self.gateway_url, token).list_indexes)
        except DocentError as exc:
            status = exc.status if exc.status in (401, 403) else 502
            await _refuse(send, status, "unauthorized" if status == 401 else "forbidden" if status == 403
                          else "upstream_unavailable", str(exc))
            return
        await self.app(scope, receive, send)


async def _refuse(send: Any, status: int, code: str, message: str) -> None:
    body = json.dumps({"error": {"code": code, "message": message}}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status == 401:
        headers.append((b"www-authenticate", b'Bearer realm="docent"'))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def serve(rag_url: str, gateway_url: str, host: str, port: int) -> None:
    """Serve `/mcp` until interrupted (uvicorn, which the SDK's HTTP transport is built for)."""
    import uvicorn

    def credential(ctx: Any) -> str:
        request = ctx.request_context.request
        return bearer(request.headers) if request is not None else ""

    mcp = build_server(rag_url, gateway_url, credential, host=host, port=port, stateless_http=True,
                       json_response=True)
    app = BearerRequired(mcp.streamable_http_app(), rag_url, gateway_url)
    log.info("MCP server listening on http://%s:%d/mcp", host, port)
    uvicorn.run(app, host=host, port=port, log_level="warning", lifespan="on")
