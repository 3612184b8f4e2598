"""What a handler receives and returns: a parsed request, a JSON/text response, or a stream."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rag_system.api.errors import ApiError
from rag_system.jsonbody import JsonBodyError, parse_json_body

if TYPE_CHECKING:
    from rag_system.api.app import Service
    from rag_system.api.sse import SSEStream


@dataclass
class Request:
    method: str
    path: str
    params: dict[str, str]
    query: dict[str, list[str]]
    headers: Mapping[str, str]
    body: bytes
    request_id: str
    service: Service

    def json(self) -> Any:
        """The body as JSON; an empty body is `{}`; anything unparsable is a 400."""
        if not self.body.strip():
            return {}
        try:
            return parse_json_body(self.body)
        except JsonBodyError as exc:
            raise ApiError(400, "invalid_json", f"the request body is not valid JSON ({exc})") from exc


@dataclass
class Response:
    status: int = 200
    body: Any = None  # dict/list -> JSON; str -> text
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)

    def encode(self) -> bytes:
        if isinstance(self.body, (bytes, bytearray)):
            return bytes(self.body)
        if isinstance(self.body, str):
            return self.body.encode()
        return json.dumps(self.body, ensure_ascii=False).encode()


@dataclass
class Stream:
    """A `text/event-stream` response: the server sends headers, then calls `run(sse)`."""

    run: Callable[[SSEStream], None]
    headers: dict[str, str] = field(default_factory=dict)
