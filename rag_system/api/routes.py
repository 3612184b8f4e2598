"""The route table: (method, pattern) -> handler (`common.http.RouteTable` matches; 404/405 come from it)."""

from __future__ import annotations

from common.http import Route, RouteTable
from rag_system.api import (
    handlers_backup, handlers_chat, handlers_index, handlers_sync, handlers_system, handlers_verify)

ROUTES = (
    Route("GET", "/health", handlers_system.health, public=True),
    Route("GET", "/models", handlers_system.models),
    Route("GET", "/metrics", handlers_system.metrics),
    Route("POST", "/chat", handlers_chat.chat),
    Route("POST", "/chat/stream", handlers_chat.chat_stream),
    Route("POST", "/retrieve", handlers_chat.retrieve),
    Route("POST", "/verify", handlers_verify.verify),
    Route("POST", "/index", handlers_index.start_job),
    Route("GET", "/index/jobs/{job_id}", handlers_index.job_status),
    Route("DELETE", "/index/jobs/{job_id}", handlers_index.cancel_job),
    Route("GET", "/index/jobs/{job_id}/events", handlers_index.job_events),
    Route("GET", "/indexes", handlers_index.list_all),
    Route("DELETE", "/indexes/{name}", handlers_index.delete_index),
    Route("DELETE", "/indexes/{name}/documents/{document_id}", handlers_index.remove_document),
    Route("GET", "/indexes/{name}/sync", handlers_sync.status),
    Route("POST", "/indexes/{name}/sync", handlers_sync.trigger),
    Route("POST", "/indexes/{name}/sync/folders", handlers_sync.bind),
    Route("DELETE", "/indexes/{name}/sync/folders", handlers_sync.unbind),
    Route("POST", "/backup", handlers_backup.backup),
)


#: Which routes a browser's access grant may call ("grant": the handler checks the indexes named) and
#: which only the gateway and tools may ("service"); rag_system/api/access.py.
ROUTE_ACCESS: dict[tuple[str, str], str] = {
    ("GET", "/health"): "grant",
    ("GET", "/models"): "grant",
    ("GET", "/metrics"): "service",
    ("POST", "/chat"): "grant",
    ("POST", "/chat/stream"): "grant",
    ("POST", "/retrieve"): "grant",
    ("POST", "/verify"): "grant",
    ("POST", "/index"): "service",
    ("GET", "/index/jobs/{job_id}"): "grant",
    ("DELETE", "/index/jobs/{job_id}"): "service",
    ("GET", "/index/jobs/{job_id}/events"): "grant",
    ("GET", "/indexes"): "grant",
    ("DELETE", "/indexes/{name}"): "service",
    ("DELETE", "/indexes/{name}/documents/{document_id}"): "service",
    ("GET", "/indexes/{name}/sync"): "grant",
    ("POST", "/indexes/{name}/sync"): "service",
    ("POST", "/indexes/{name}/sync/folders"): "service",
    ("DELETE", "/indexes/{name}/sync/folders"): "service",
    ("POST", "/backup"): "service",
}


def access_of(method: str, pattern: str) -> str:
    """A route missing from ROUTE_ACCESS is service-only."""
    return ROUTE_ACCESS.get(("GET" if method == "HEAD" else method, pattern), "service")


def router() -> RouteTable:
    return RouteTable(ROUTES)
