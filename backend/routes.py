"""The route table: (method, path pattern) -> handler. Patterns use `{name}` for one segment."""

from __future__ import annotations

import re
from dataclasses import dataclass

from backend import handlers_chat as chat
from backend import handlers_documents as documents
from backend import handlers_indexes as indexes
from backend import handlers_sessions as sessions
from backend import handlers_system as system
from backend.web import ApiError, Handler


@dataclass(frozen=True)
class Route:
    method: str
    pattern: str
    handler: Handler
    public: bool = False  # served without the API token (only /health)

    @property
    def regex(self) -> re.Pattern[str]:
        return _compile(self.pattern)


TABLE: tuple[Route, ...] = (
    Route("GET", "/health", system.health, public=True),
    Route("GET", "/models", system.models),
    Route("GET", "/metrics", system.metrics),
    Route("GET", "/sessions", sessions.list_sessions),
    Route("POST", "/sessions", sessions.create_session),
    Route("GET", "/sessions/{session_id}", sessions.get_session),
    Route("DELETE", "/sessions/{session_id}", sessions.delete_session),
    Route("POST", "/sessions/{session_id}/rename", sessions.rename_session),
    Route("POST", "/sessions/{session_id}/messages", chat.post_message),
    Route("POST", "/sessions/{session_id}/messages/save", chat.save_turn),
    Route("GET", "/sessions/{session_id}/documents", sessions.session_documents),
    Route("POST", "/sessions/{session_id}/upload", sessions.upload),
    Route("POST", "/sessions/{session_id}/index", sessions.index_documents),
    Route("GET", "/sessions/{session_id}/indexes", sessions.session_indexes),
    Route("POST", "/sessions/{session_id}/indexes/{index_id}", sessions.link_index),
    Route("DELETE", "/sessions/{session_id}/indexes/{index_id}", sessions.unlink_index),
    Route("GET", "/indexes", indexes.list_indexes),
    Route("POST", "/indexes", indexes.create_index),
    Route("GET", "/indexes/{index_id}", indexes.get_index),
    Route("DELETE", "/indexes/{index_id}", indexes.delete_index),
    Route("POST", "/indexes/{index_id}/upload", indexes.upload),
    Route("POST", "/indexes/{index_id}/build", indexes.build),
    Route("GET", "/indexes/{index_id}/jobs/{job_id}", indexes.job),
    Route("GET", "/documents/{document_id}/pages/{page}.png", documents.page_image),
    Route("GET", "/documents/{document_id}/file", documents.original_file),
)

_CACHE: dict[str, re.Pattern[str]] = {}


def _compile(pattern: str) -> re.Pattern[str]:
    if pattern not in _CACHE:
        regex = re.sub(r"\{(\w+)\}", r"(?P<\1>[^/]+)", re.escape(pattern).replace(r"\{", "{").replace(r"\}", "}"))
        _CACHE[pattern] = re.compile(f"^{regex}$")
    return _CACHE[pattern]


def match(method: str, path: str) -> tuple[Route, dict[str, str]]:
    """The route for `method path` and its parameters; 404 for an unknown path, 405 for a wrong method."""
    allowed: list[str] = []
    for route in TABLE:
        found = route.regex.match(path)
        if found is None:
            continue
        if route.method == method or (method == "HEAD" and route.method == "GET"):
            return route, found.groupdict()
        allowed.append(route.method)
    if allowed:
        raise ApiError(405, "method_not_allowed", f"{method} is not allowed on {path}; use {', '.join(allowed)}",
                       allowed=sorted(set(allowed)))
    raise ApiError(404, "not_found", f"no route for {path}")


def allowed_methods(path: str) -> list[str]:
    return sorted({r.method for r in TABLE if r.regex.match(path)})
