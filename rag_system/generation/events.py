"""The answer stream's vocabulary: every event the answering path emits, and what its data holds.

Why one table: `/chat/stream` writes these events as SSE, `/chat` returns them as `steps`, the
gateway stores them and the web app draws the answer's phases from them, so a renamed event or a
dropped field breaks clients far from the line that emitted it. Every emit goes through `checked`,
which refuses a name or a payload the table does not declare; Documentation/api.md ("Stream
events") and the web app (`frontend/static/js/chat.js`) are tested against `EVENTS`. It lives in
`generation/`, the lowest layer that emits (the agent and the tasks import it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

#: Where an event goes: the pipeline's sink (the SSE stream, the turn's record, a test's list).
Emit = Callable[[str, dict[str, Any]], None]


@dataclass(frozen=True)
class EventSpec:
    fields: tuple[str, ...]  # always in its data
    optional: tuple[str, ...] = ()  # in its data on some paths only
    open: bool = False  # may carry more fields: an answer's JSON, a validation report, a trace


_ANSWER = ("answer", "answer_source")

#: Every event of `/chat/stream`, by name (Documentation/api.md, "Stream events").
EVENTS: Mapping[str, EventSpec] = MappingProxyType({
    "analyze": EventSpec(("query", "route", "indexes"), ("reason", "kind", "task")),
    "direct_answer": EventSpec(("kind",)),
    "cache_hit": EventSpec(("similarity", "query")),
    "document_scope": EventSpec(("name", "documents")),
    "decomposition": EventSpec(("sub_queries", "method")),
    "retrieval_started": EventSpec(("queries", "mode", "k")),
    "retrieval_done": EventSpec(("count", "evidence_score", "timings_ms", "warnings", "top")),
    "retrieval_retry": EventSpec(("query", "kept", "evidence_score", "original_evidence_score",
                                  "signal", "score_before", "score_after")),
    "rerank_started": EventSpec(("count",)),
    "rerank_done": EventSpec(("kept", "warnings", "reranked")),
    "rerank_skipped": EventSpec(("reason",)),
    "context_expand_started": EventSpec(("window", "count")),
    "context_expand_done": EventSpec(("count",)),
    "sources": EventSpec(("source_documents",)),
    "generation_started": EventSpec(("backend", "passages", "prompt_tokens", "estimated_s", "message")),
    "backend_fallback": EventSpec(("from", "error")),
    "checking": EventSpec(("sentence", "message")),
    "token": EventSpec(("text",)),
    "citations": EventSpec(("stage",), open=True),
    "answer_repaired": EventSpec(("answer", "method"), ("dropped", "attributed", "recited")),
    "answer_replaced": EventSpec(_ANSWER + ("reason",)),
    "answer_corroborated": EventSpec(("answer", "sentences")),
    "refusal": EventSpec(("reason",)),
    "task_resolved": EventSpec(("task", "names"), ("documents",)),
    "task_part": EventSpec(("task", "markdown"), ("key", "document_id", "source", "sources", "valid")),
    "inspector": EventSpec(("kind",), open=True),
    "complete": EventSpec(_ANSWER, open=True),
    "error": EventSpec(("code", "message", "error", "turn_id")),  # written by the RAG API when answering fails
})


class UndeclaredEvent(ValueError):
    """An emit the table does not declare: a bug in the emitting code, never the client's input."""


def problem(event: str, data: Mapping[str, Any]) -> str | None:
    """What is wrong with emitting `event` with `data`, or None when the table declares it."""
    spec = EVENTS.get(event)
    if spec is None:
        return f"undeclared stream event {event!r}"
    missing = [f for f in spec.fields if f not in data]
    if missing:
        return f"stream event {event!r} lacks {', '.join(missing)}"
    extra = [] if spec.open else [f for f in data if f not in spec.fields and f not in spec.optional]
    if extra:
        return f"stream event {event!r} has undeclared fields {', '.join(extra)}"
    return None


class _Checked:
    """A sink behind the table: refuses what `EVENTS` does not declare, then forwards."""

    def __init__(self, sink: Emit) -> None:
        self.sink = sink

    def __call__(self, event: str, data: dict[str, Any]) -> None:
        wrong = problem(event, data)
        if wrong is not None:
            raise UndeclaredEvent(wrong)
        self.sink(event, data)


def checked(sink: Emit | None = None) -> Emit:
    """`sink` (none: events go nowhere) behind the table; a sink already checked is returned as is."""
    if isinstance(sink, _Checked):
        return sink
    return _Checked(sink if sink is not None else _discard)


def _discard(event: str, data: dict[str, Any]) -> None:
    return None
