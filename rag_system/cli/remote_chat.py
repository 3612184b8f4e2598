"""`chat` through a RAG API that is already running, instead of loading models per question.

Why: an in-process `chat` loads the embedder and the GGUF model (10-20 s on
2 cores) and throws them away after one answer; the RAG API started by
`make run` already holds both, warm, with the system prompt cached. So when
one serves this CLI's store (`running_api.find_running_api`), `chat` sends
the question there and says so on stderr; `--local` keeps the old behaviour.
Standard library only, so this path starts in well under a second.
"""

from __future__ import annotations

import argparse
import json
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

from common.errors import error_fields
from common.sse import read_frames
from rag_system.cli.running_api import ApiCallError, RunningApi


class RemoteError(RuntimeError):
    """The RAG API answered with an error; `status` is its HTTP status (4xx: the request's fault)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def chat_body(args: argparse.Namespace, indexes: list[str]) -> dict[str, Any]:
    """The `/chat` body for the CLI's options (Documentation/api.md)."""
    body: dict[str, Any] = {"query": args.query, "indexes": indexes}
    optional = {"retrieval_mode": args.mode, "retrieval_k": args.k, "backend": args.backend,
                "model": args.model, "task": getattr(args, "task", None),
                "documents": getattr(args, "documents", None)}
    body.update({k: v for k, v in optional.items() if v is not None})
    if args.filters:
        body["filters"] = json.loads(args.filters)
    if args.no_expand:
        body["context_expand"] = False
    return body


def remote_chat(api: RunningApi, body: dict[str, Any],
                on_event: Callable[[str, dict[str, Any]], None] | None = None,
                timeout_s: float = 600.0) -> dict[str, Any]:
    """POST the question; with `on_event`, stream it and pass every event on. Returns the `complete` payload."""
    if on_event is None:
        try:
            return api.call("POST", "/chat", body, timeout=timeout_s)
        except ApiCallError as exc:
            raise RemoteError(exc.status, str(exc)) from exc
    headers = {"Content-Type": "application/json"}
    if api.token:
        headers["Authorization"] = f"Bearer {api.token}"
    request = urllib.request.Request(f"{api.url}/chat/stream", data=json.dumps(body).encode(), headers=headers,
                                     method="POST")
    try:
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(request, timeout=timeout_s) as resp:
            for event, data in read_frames(resp):
                if event == "error":
                    raise RemoteError(int(data.get("status", 500)), _message(data))
                on_event(event, data)
                if event == "complete":
                    return data
    except urllib.error.HTTPError as exc:
        try:
            payload = json.loads(exc.read() or b"{}")
        except ValueError:
            payload = {}
        raise RemoteError(exc.code, _message(payload) or str(exc)) from exc
    raise RemoteError(502, "the RAG API ended the stream without an answer")


def _message(payload: dict[str, Any]) -> str:
    code, message = error_fields(payload)
    return message or code
