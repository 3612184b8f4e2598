"""The route table: (method, pattern) -> handler. Patterns use `{name}` segments."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rag_system.api import handlers_chat, handlers_index, handlers_sync, handlers_system
from rag_system.api.errors import ApiError

Handler = Callable[[Any], Any]


@dataclass(frozen=True)
class Route:
    method: str
    pattern: str
    handler: Handler
    auth: bool = True  # needs the bearer token when one is configured
    regex: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        parts = re.sub(r"\{(\w+)\}", r"(?P<\1>[^/]+)", self.pattern)
        object.__setattr__(self, "regex", re.compile(f"^{parts}$"))


ROUTES = (
    Route("GET", "/health", handlers_system.health, auth=False),
    Route("GET", "/models", handlers_system.models),
    Route("GET", "/metrics", handlers_system.metrics),
    Route("POST", "/chat", handlers_chat.chat),
    Route("POST", "/chat/stream", handlers_chat.chat_stream),
    Route("POST", "/retrieve", handlers_chat.retrieve),
    Route("POST", "/index", handlers_index.start_job),
    Route("GET", "/index/jobs/{job_id}", handlers_index.job_status),
    Route("DELETE", "/index/jobs/{job_id}", handlers_index.cancel_job),
    Route("GET", "/index/jobs/{job_id}/events", handlers_index.job_events),
    Route("GET", "/indexes", handlers_index.list_all),
    Route("DELETE", "/indexes/{name}", handlers_index.delete_index),
    Route("GET", "/indexes/{name}/sync", handlers_sync.status),
    Route("POST", "/indexes/{name}/sync", handlers_sync.trigger),
    Route("POST", "/indexes/{name}/sync/folders", handlers_sync.bind),
    Route("DELETE", "/indexes/{name}/sync/folders", handlers_sync.unbind),
)


class Router:
    def __init__(self, routes: tuple[Route, ...] = ROUTES) -> None:
        self.routes = routes

    def match(self, method: str, path: str) -> tuple[Route, dict[str, str]]:
        allowed: list[str] = []
        for route in self.routes:
            m = route.regex.match(path)
            if m is None:
                continue
            if route.method == method:
                return route, m.groupdict()
            allowed.append(route.method)
        if allowed:
            raise ApiError(405, "method_not_allowed", f"{method} is not allowed on {path}",
                           {"Allow": ", ".join(sorted(set(allowed)))})
        raise ApiError(404, "not_found", f"no route for {method} {path}")

    def methods(self, path: str) -> list[str]:
        return sorted({r.method for r in self.routes if r.regex.match(path)})
