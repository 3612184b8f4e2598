"""What a handler receives and returns: a parsed request, or a stream (responses are `common.http.Response`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from common.http import Headers
from common.jsonbody import decode_json
from rag_system.api.access import SERVICE, Caller

if TYPE_CHECKING:
    from common.sse import SSEStream
    from rag_system.api.app import Service


@dataclass
class Request:
    method: str
    path: str
    params: dict[str, str]
    query: dict[str, list[str]]
    headers: Headers
    body: bytes
    request_id: str
    service: Service
    #: Who is calling (rag_system/api/access.py): the service, or a person holding a gateway grant.
    caller: Caller = SERVICE

    def json(self) -> Any:
        """The body as JSON; an empty body is `{}`; anything unparsable is a 400."""
        return decode_json(self.body) if self.body.strip() else {}


@dataclass
class Stream:
    """A `text/event-stream` response: the server sends headers, then calls `run(sse)`."""

    run: Callable[[SSEStream], None]
    headers: dict[str, str] = field(default_factory=dict)

