"""The gateway's request (its body streamed, for uploads) and field readers; the rest is `common.http`."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

from backend.principal import SINGLE, Principal
from common.errors import ApiError
from common.http import Headers, Readable, Response
from common.jsonbody import decode_json


class BodyStream:
    """The request body: at most Content-Length bytes of the socket, counted, so the rest can be drained."""

    def __init__(self, raw: Readable, length: int) -> None:
        self.raw, self.remaining = raw, max(0, length)

    def read(self, n: int = -1) -> bytes:
        if self.remaining <= 0:
            return b""
        want = self.remaining if n < 0 else min(n, self.remaining)
        data = self.raw.read(want)
        self.remaining -= len(data)
        if not data:
            self.remaining = 0
        return data

    def drain(self, limit: int) -> bool:
        """Read and drop what the handler left unread, up to `limit` bytes; True when nothing is left."""
        if self.remaining > limit:
            return False
        while self.remaining > 0 and self.read(256 * 1024):
            pass
        return self.remaining == 0


def not_found(what: str, ident: str) -> ApiError:
    return ApiError(404, f"{what}_not_found", f"{what.replace('_', ' ')} {ident!r} not found")


@dataclass
class Request:
    """One parsed HTTP request. The body is read on demand (uploads stream it)."""

    method: str
    path: str
    query_string: str
    headers: Headers
    request_id: str
    rfile: BodyStream
    max_json_bytes: int
    params: dict[str, str] = field(default_factory=dict)
    #: Who is asking (backend/authn.py); single-user mode is one unrestricted person.
    principal: Principal = SINGLE
    client: str = ""
    _body: bytes | None = None

    @property
    def query(self) -> dict[str, list[str]]:
        return parse_qs(self.query_string, keep_blank_values=True)

    def query_value(self, name: str) -> str | None:
        values = self.query.get(name)
        return values[0] if values else None

    @property
    def content_length(self) -> int | None:
        raw = self.headers.get("Content-Length")
        if raw is None:
            return None
        try:
            value = int(raw)
        except ValueError as exc:
            raise ApiError(400, "bad_content_length", "Content-Length is not a number") from exc
        if value < 0:
            raise ApiError(400, "bad_content_length", "Content-Length is negative")
        return value

    def body(self) -> bytes:
        if self._body is None:
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                raise ApiError(411, "length_required", "send a Content-Length (chunked bodies are not accepted)")
            length = self.content_length or 0
            if length > self.max_json_bytes:
                raise ApiError(413, "body_too_large",
                               f"request body is {length} bytes; the limit is {self.max_json_bytes}")
            self._body = self.rfile.read(length) if length else b""
        return self._body

    def json(self, *, required: bool = True) -> dict[str, Any]:
        """The body as a JSON object; a missing or malformed body is a 400."""
        raw = self.body()
        if not raw.strip():
            if required:
                raise ApiError(400, "missing_body", "this endpoint needs a JSON object body")
            return {}
        data = decode_json(raw)
        if not isinstance(data, dict):
            raise ApiError(400, "invalid_body", "the body must be a JSON object")
        return data


Handler = Callable[[Any, Request], Response]

_HOST = re.compile(r"^[A-Za-z0-9.\-]+(:[0-9]{1,5})?$|^\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?$")


def public_base(req: Request) -> str:
    """The gateway's address as the caller reached it (`Host`, and `X-Forwarded-Proto` behind a proxy),
    for absolute links in what it sends away (an exported conversation's page links)."""
    host = req.headers.get("X-Forwarded-Host") or req.headers.get("Host") or ""
    host = host.split(",")[0].strip()
    if not _HOST.match(host):
        host = "127.0.0.1"
    proto = (req.headers.get("X-Forwarded-Proto") or "http").split(",")[0].strip().lower()
    return f"{proto if proto in ('http', 'https') else 'http'}://{host}"


def require_str(data: dict[str, Any], name: str, *, max_len: int = 10_000, allow_empty: bool = False) -> str:
    value = data.get(name)
    if not isinstance(value, str) or (not allow_empty and not value.strip()):
        raise ApiError(400, "invalid_field", f"'{name}' must be a non-empty string")
    if len(value) > max_len:
        raise ApiError(400, "invalid_field", f"'{name}' is longer than {max_len} characters")
    return value


def optional_str(data: dict[str, Any], name: str, default: str = "", *, max_len: int = 10_000) -> str:
    if data.get(name) is None:
        return default
    return require_str(data, name, max_len=max_len, allow_empty=True)

