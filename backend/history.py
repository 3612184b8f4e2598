"""The conversation so far, as the RAG API reads it: a session's last messages, oldest first.

The RAG API keeps no conversation state (Documentation/architecture.md), so a follow-up ("what
about sick leave?") is resolved against these: sent along with `/chat`, or read by the RAG API
from `GET /sessions/<id>/history` when the browser streams a turn directly. A user message
carries the self-contained form the RAG API derived for it (`standalone`), so a chain of
follow-ups keeps its referent. Only answered turns are a conversation: a turn whose answer failed,
was stopped or never came is left out with its question (else "what about /opt?" after a failed
"thanks" was rewritten against "thanks"), and so is small talk ("thanks!", "hello"): it answers
nothing a follow-up could refer to.
"""

from __future__ import annotations

from typing import Any

from backend.store import Store

DEFAULT_MESSAGES = 6
MAX_MESSAGES = 50


def conversation(store: Store, session_id: str, limit: int = DEFAULT_MESSAGES,
                 exclude_turn: str | None = None) -> list[dict[str, Any]]:
    messages = [m for m in store.recent_messages(session_id, 2 * limit + 2) if m["turn_id"] != exclude_turn]
    answered = {m["turn_id"]: m["metadata"] for m in messages
                if m["sender"] == "assistant" and _answered(m["metadata"])}
    out: list[dict[str, Any]] = []
    for m in messages:
        meta = answered.get(m["turn_id"])
        if meta is None:
            continue
        item = {"role": m["sender"], "content": m["content"], "turn_id": m["turn_id"]}
        if m["sender"] == "user" and _standalone(meta):
            item["standalone"] = _standalone(meta)
        out.append(item)
    return out[-limit:]


def _answered(meta: dict[str, Any]) -> bool:
    """A complete answer to something other than small talk."""
    if meta.get("status", "complete") != "complete":
        return False
    reason = meta.get("gate") or meta.get("route_reason") or _complete(meta).get("route_reason") or ""
    return not str(reason).startswith("smalltalk:")


def _complete(meta: dict[str, Any]) -> dict[str, Any]:
    """The saved `complete` event of a streamed turn (what `/chat` returns), or {}."""
    events = meta.get("events", meta.get("steps"))  # `steps` in turns stored before `events` existed
    steps = events if isinstance(events, list) else []
    done = next((s.get("data") for s in steps if isinstance(s, dict) and s.get("type") == "complete"), None)
    return done if isinstance(done, dict) else {}


def _standalone(meta: dict[str, Any]) -> str | None:
    """The rewritten question: top-level for a `/chat` answer, in the `complete` step for a streamed one."""
    return meta.get("standalone_query") or _complete(meta).get("standalone_query")
