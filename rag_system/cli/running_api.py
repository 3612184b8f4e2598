"""A RAG API already running over the same store, for CLI commands that can let it do the work.

Why: the API keeps the embedder (and the model) loaded, so `retrieve` through
it answers in well under a second, where loading PyTorch and the embedder in
the CLI costs 8-10 s on 2 cores. Only an API that serves the store this CLI
would open is used (its `/health` names the store), so a CLI pointed at
another data directory never reads someone else's indexes. Standard library
only: this module is imported before anything heavy.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from common.errors import error_fields

if TYPE_CHECKING:
    from rag_system.config import Settings

#: How long the CLI waits for `/health` before doing the work itself.
PROBE_TIMEOUT_S = 0.5


class ApiCallError(RuntimeError):
    """The running API answered with an error: `status`, `code` and its message."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code = status, code


@dataclass(frozen=True)
class RunningApi:
    url: str
    token: str = ""

    def call(self, method: str, path: str, body: dict[str, Any] | None = None,
             timeout: float = 120.0) -> dict[str, Any]:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method)
        request.add_header("Content-Type", "application/json")
        if self.token:
            request.add_header("Authorization", f"Bearer {self.token}")
        try:
            # No proxy: the API is on loopback or a configured URL, never behind http_proxy.
            with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(request, timeout=timeout) as resp:
                return json.loads(resp.read() or b"{}")
        except urllib.error.HTTPError as exc:
            raise api_error(exc) from exc


def api_error(exc: urllib.error.HTTPError) -> ApiCallError:
    """The RAG API's error answer (status, code, message from its JSON body) as an `ApiCallError`."""
    try:
        code, message = error_fields(json.loads(exc.read() or b"{}"))
    except ValueError:
        code, message = "", ""
    return ApiCallError(exc.code, code, message or f"the RAG API answered {exc.code}")


def api_url(settings: Settings) -> str:
    """`RAG_API_URL` when set (as for the gateway), else the API's own host and port."""
    explicit = os.environ.get("RAG_API_URL", "").split(",")[0].strip().rstrip("/")
    if explicit:
        return explicit
    host = "127.0.0.1" if settings.api_host in ("", "0.0.0.0", "::") else settings.api_host
    return f"http://{host}:{settings.api_port}"


def _same_store(reported: str, ours: str) -> bool:
    if "://" in reported or "://" in ours:
        return reported.rstrip("/") == ours.rstrip("/")
    return os.path.realpath(reported) == os.path.realpath(ours)


def find_running_api(settings: Settings, timeout: float = PROBE_TIMEOUT_S) -> RunningApi | None:
    """The RAG API serving this CLI's store, when one is up and ready; None otherwise."""
    api = RunningApi(api_url(settings), settings.api_token)
    try:
        health = api.call("GET", "/health", timeout=timeout)
    except (OSError, ValueError, ApiCallError):
        return None  # not running, not ready (503), or not a RAG API
    store = (health.get("components") or {}).get("store") or {}
    if health.get("status") != "ok" or not _same_store(str(store.get("uri", "")), settings.resolved_lancedb_uri):
        return None
    return api
