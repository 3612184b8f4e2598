"""The HTTP vocabulary both stdlib servers speak: routes, responses, request ids, bearer and CORS checks.

Each service keeps its own request type (the gateway streams upload bodies, the RAG API reads a
bounded body up front) but routes, answers and checks requests the same way, so a client sees one
behaviour: the same error shape, the same 404/405 rules, the same request-id echo.
"""

from __future__ import annotations

import hmac
import json
import re
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from email.message import Message
from typing import Any, Protocol

from common.errors import ApiError, DomainError

#: A request's headers: the server's `http.client.HTTPMessage` (whose `get` ignores case) or a plain mapping.
Headers = Mapping[str, str] | Message


class Readable(Protocol):
    """A request body: the server's `rfile`, the gateway's counted `BodyStream`, a `BytesIO` in tests."""

    def read(self, n: int = -1, /) -> bytes: ...

_REQUEST_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")


@dataclass(frozen=True)
class Route:
    """`pattern` uses `{name}` for one path segment; `public` routes skip the token (only /health)."""

    method: str
    pattern: str
    handler: Callable[..., Any]
    public: bool = False
    regex: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        literal = re.escape(self.pattern).replace(r"\{", "{").replace(r"\}", "}")
        object.__setattr__(self, "regex", re.compile("^" + re.sub(r"\{(\w+)\}", r"(?P<\1>[^/]+)", literal) + "$"))


class RouteTable:
    """(method, path) -> route and its parameters; 404 for an unknown path, 405 naming the allowed methods."""

    def __init__(self, routes: Iterable[Route]) -> None:
        self.routes = tuple(routes)

    def match(self, method: str, path: str) -> tuple[Route, dict[str, str]]:
        allowed: list[str] = []
        for route in self.routes:
            found = route.regex.match(path)
            if found is None:
                continue
            if route.method == method or (method == "HEAD" and route.method == "GET"):
                return route, found.groupdict()
            allowed.append(route.method)
        if allowed:
            names = sorted(set(allowed))
            raise ApiError(405, "method_not_allowed", f"{method} is not allowed on {path}; use {', '.join(names)}",
                           {"Allow": ", ".join(names)}, allowed=names)
        raise ApiError(404, "not_found", f"no route for {method} {path}")

    def methods(self, path: str) -> list[str]:
        return sorted({r.method for r in self.routes if r.regex.match(path)})


@dataclass
class Response:
    """`body`: a dict or list is sent as JSON, a str as text, bytes as they are, any other iterable streamed."""

    status: int = 200
    body: Any = None
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)
    #: Never sent: what the handler adds to the audit row the gateway writes for its route (backend/access.py).
    audit: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def json(cls, data: Any, status: int = 200, *, audit: Mapping[str, Any] | None = None) -> Response:
        return cls(status, data, audit=audit or {})

    @classmethod
    def error(cls, err: DomainError) -> Response:
        return cls(err.status, err.to_json(), headers=dict(err.headers))

    def payload(self) -> bytes | Iterable[bytes]:
        body = self.body
        if body is None or self.status == 204:
            return b""
        if isinstance(body, (bytes, bytearray)):
            return bytes(body)
        if isinstance(body, str):
            return body.encode()
        if isinstance(body, (dict, list)):
            return json.dumps(body, ensure_ascii=False, default=str).encode("utf-8")
        chunks: Iterable[bytes] = body  # an iterable of bytes (a file being sent)
        return chunks


def request_id(headers: Headers) -> str:
    """The client's `X-Request-ID` when it is a sane token, else a new one (it is echoed and logged)."""
    given = headers.get("X-Request-ID", "") or ""
    return given if _REQUEST_ID.match(given) else uuid.uuid4().hex


def check_bearer(headers: Headers, token: str) -> None:
    """401 unless `Authorization: Bearer <token>` matches (compared in constant time); no token, no check."""
    if not token:
        return
    scheme, _, given = (headers.get("Authorization", "") or "").partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), token.encode()):
        raise ApiError(401, "unauthorized", "missing or wrong API token (Authorization: Bearer <token>)",
                       {"WWW-Authenticate": 'Bearer realm="docent"'})


def allowed_origin(headers: Headers, origins: Iterable[str]) -> str | None:
    """The request's `Origin` when it is one of the configured origins (never `*`), else None."""
    origin = (headers.get("Origin") or "").rstrip("/")
    return origin if origin and origin in origins else None
