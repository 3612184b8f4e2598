"""The conversation so far, as the RAG API reads it: a session's last messages, oldest first.

The RAG API keeps no conversation state (Documentation/architecture.md), so a follow-up ("what
about sick leave?") is resolved against these: sent along with `/chat`, or read by the RAG API
from `GET /sessions/<id>/history` when the browser streams a turn directly. A user message
carries the self-contained form the RAG API derived for it (`standalone`), so a chain of
follow-ups keeps its referent; failed or cancelled answers are left out.
"""

from __future__ import annotations

from typing import Any

from backend.store import Store

DEFAULT_MESSAGES = 6
MAX_MESSAGES = 50


def conversation(store: Store, session_id: str, limit: int = DEFAULT_MESSAGES,
                 exclude_turn: str | None = None) -> list[dict[str, Any]]:
    messages = [m for m in store.recent_messages(session_id, 2 * limit + 2) if m["turn_id"] != exclude_turn]
    standalone = {m["turn_id"]: _standalone(m["metadata"]) for m in messages if m["sender"] == "assistant"}
    out: list[dict[str, Any]] = []
    for m in messages:
        if m["sender"] == "assistant" and m["metadata"].get("status", "complete") != "complete":
            continue
        item = {"role": m["sender"], "content": m["content"], "turn_id": m["turn_id"]}
        if m["sender"] == "user" and standalone.get(m["turn_id"]):
            item["standalone"] = standalone[m["turn_id"]]
        out.append(item)
    return out[-limit:]


def _standalone(meta: dict[str, Any]) -> str | None:
    """The rewritten question: top-level for a `/chat` answer, in the `complete` step for a streamed one."""
    if meta.get("standalone_query"):
        return meta["standalone_query"]
    events = meta.get("events", meta.get("steps"))  # `steps` in turns stored before `events` existed
    steps = events if isinstance(events, list) else []
    done = next((s.get("data") for s in steps if isinstance(s, dict) and s.get("type") == "complete"), None)
    return done.get("standalone_query") if isinstance(done, dict) else None
