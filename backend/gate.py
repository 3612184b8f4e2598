"""The routing gate of `POST /sessions/<id>/messages` (a thin wrapper, pure).

The rules live in `rag_system.agent.triage.route_message` so the gateway and
the RAG API's own triage can never disagree: `force_rag` or a `filters` object
retrieves; no linked index answers directly; whole-message smalltalk or a
question about the assistant (anchored, at most six words) answers directly;
everything else retrieves.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from rag_system.agent.triage import route_message, triage

from backend.options import has_filters, names_a_task


@dataclass(frozen=True)
class GateDecision:
    route: Literal["rag", "direct"]
    reason: str


def decide(message: str, *, index_ids: list[str] | tuple[str, ...], options: dict[str, Any]) -> GateDecision:
    """Route one chat message given the session's linked indexes and the normalised options."""
    force = bool(options.get("force_rag")) or names_a_task(options)
    filters = has_filters(options)
    has_index = bool(index_ids)
    route = route_message(message, has_index=has_index, force_rag=force, has_filters=filters)
    if names_a_task(options):
        reason = f"task:{options['task']}"
    elif force:
        reason = "force_rag"
    elif filters:
        reason = "filters"
    elif not has_index:
        reason = "no_index"
    elif route == "direct":
        reason = f"smalltalk:{triage(message).kind}"
    else:
        reason = "document_question"
    return GateDecision(route, reason)
