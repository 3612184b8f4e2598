"""Runs a `summary` or `compare` request end to end: route, resolve names, build, package.

The pipeline hands every non-`qa` request here first. `auto` comes back as
`None` (answer it as a question) unless the message asks for a task *and*
at least one name it gives matches a document; then an unresolved or
ambiguous name is asked back as a `clarification` answer listing the
candidates, never guessed.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

from rag_system.generation.events import Emit, checked
from rag_system.generation.llm import GenerationParams
from rag_system.generation.registry import BackendRegistry
from rag_system.retrieval.engine import RetrievalEngine
from rag_system.tasks.compare import MAX_DOCUMENTS, MIN_DOCUMENTS, compare
from rag_system.tasks.documents import (
    DocumentRef,
    Resolution,
    catalogue,
    display_name,
    document_blocks,
    resolve,
)
from rag_system.tasks.outcome import Outcome
from rag_system.tasks.overview import MAX_DOCUMENTS as OVERVIEW_DOCUMENTS
from rag_system.tasks.overview import overview
from rag_system.tasks.parts import answer_source, merged_citations, overall_validation
from rag_system.tasks.routing import detect, nameless_summary, names_of
from rag_system.tasks.summary import summarise


#: A summary or a comparison needs more room than a one-paragraph answer.
TASK_MAX_TOKENS = 700
LISTED = 12


@dataclass
class TaskResponse:
    """Shaped like `ChatResponse.to_json()` so every client reads one format, plus the task's parts."""

    task: str
    query: str
    answer: str
    answer_source: str  # llm | mixed | extractive | clarification
    backend: str = "none"
    model: str = ""
    citations: list[dict[str, Any]] = field(default_factory=list)
    source_documents: list[dict[str, Any]] = field(default_factory=list)
    validation: dict[str, Any] | None = None
    documents: list[dict[str, Any]] = field(default_factory=list)
    parts: list[dict[str, Any]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    token_usage: dict[str, Any] = field(default_factory=dict)
    timings_ms: dict[str, float] = field(default_factory=dict)
    fallbacks: list[dict[str, str]] = field(default_factory=list)
    inspector: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"answer": self.answer, "answer_source": self.answer_source, "citations": self.citations,
                "backend": self.backend, "model": self.model, "validation": self.validation,
                "first_validation": None, "refusal_reason": None, "coverage": 1.0, "fallbacks": self.fallbacks,
                "query": self.query, "route": "task", "route_reason": f"task:{self.task}", "task": self.task,
                "documents": self.documents, "parts": self.parts, **self.extra,
                "source_documents": self.source_documents,
                "evidence_score": None, "token_usage": self.token_usage,
                "timings_ms": {k: round(v, 1) for k, v in self.timings_ms.items()}, "sub_queries": [],
                "standalone_query": None, "warnings": [], "cached": False, "inspector": self.inspector}


class TaskRunner:
    def __init__(self, engine: RetrievalEngine, registry: BackendRegistry) -> None:
        self.engine = engine
        self.registry = registry

    def run(self, request: Any, emit: Emit, cancel: threading.Event | None = None) -> TaskResponse | None:
        """`request` is a `ChatRequest` with `task` != "qa", or any message that asks for a summary without
        naming a document; None means "answer it as a question"."""
        emit = checked(emit)
        t0 = time.perf_counter()
        if request.task in ("qa", "auto", "summary") and not request.documents and nameless_summary(request.query):
            return self._nameless(request, emit, cancel, t0)
        task, names = self._task(request)
        if task is None:
            return None
        documents = catalogue(self.engine, request.indexes)
        resolutions = [resolve(name, documents) for name in names]
        if request.task == "auto" and not any(r.candidates for r in resolutions):
            return None  # it only looked like a task: no name matched any document
        emit("analyze", {"query": request.query, "route": "task", "task": task, "indexes": list(request.indexes)})
        emit("task_resolved", {"task": task, "names": [r.to_json() for r in resolutions]})
        trace: dict[str, Any] = {"kind": task, "resolution": [r.to_json() for r in resolutions]}
        picked = list({(r.match.index, r.match.document_id): r.match for r in resolutions if r.match}.values())
        problem = _clarify(task, resolutions, picked, documents)
        if problem is not None:
            response = TaskResponse(task, request.query, problem, "clarification",
                                    documents=[d.to_json() for d in picked], inspector=trace,
                                    timings_ms={"total_ms": (time.perf_counter() - t0) * 1000})
            emit("complete", response.to_json())
            return response
        return self._build(task, picked, request, emit, cancel, t0, trace)

    def _nameless(self, request: Any, emit: Emit, cancel: threading.Event | None, t0: float) -> TaskResponse | None:
        """"What is this about?": the summary of the one document in scope, else an overview of them all."""
        documents = in_scope(catalogue(self.engine, request.indexes), request.retrieval.filters or {})
        if not documents:
            return None  # nothing indexed in scope: the question path says so
        task = "summary" if len(documents) == 1 else "overview"
        emit("analyze", {"query": request.query, "route": "task", "task": task, "indexes": list(request.indexes)})
        emit("task_resolved", {"task": task, "names": [], "documents": [d.to_json() for d in documents]})
        trace: dict[str, Any] = {"kind": task, "resolution": [], "scope": [d.to_json() for d in documents]}
        if task == "summary":
            return self._build(task, documents, request, emit, cancel, t0, trace)
        t = time.perf_counter()
        by_doc: list[tuple[DocumentRef, list[Any]]] = []
        for doc in documents[:OVERVIEW_DOCUMENTS]:
            first = 1 + sum(len(b) for _, b in by_doc)
            by_doc.append((doc, document_blocks(self.engine, [doc], first_number=first)))
        outcome = overview(by_doc, documents[OVERVIEW_DOCUMENTS:], emit)
        blocks = [b for _, group in by_doc for b in group]
        timings = {"task_ms": (time.perf_counter() - t) * 1000, "total_ms": (time.perf_counter() - t0) * 1000}
        trace.update(_outcome_trace(outcome, [group for _, group in by_doc]))
        return self._finish(task, request, [d for d, _ in by_doc], blocks, outcome, timings, trace, emit)

    def _build(self, task: str, picked: list[DocumentRef], request: Any, emit: Emit,
               cancel: threading.Event | None, t0: float, trace: dict[str, Any]) -> TaskResponse:
        chain = self.registry.chain(request.backend)
        params = GenerationParams(max_tokens=max(request.max_tokens, TASK_MAX_TOKENS), model=request.model)
        counter = lambda text: chain[0].count_tokens(text, request.model)  # noqa: E731
        t = time.perf_counter()
        if task == "summary":
            blocks = document_blocks(self.engine, picked, count_tokens=counter)
            outcome = summarise(picked[0], blocks, chain, params, emit, cancel)
            by_doc = [blocks]
        else:
            by_doc = []
            for doc in picked:
                first = 1 + sum(len(b) for b in by_doc)
                by_doc.append(document_blocks(self.engine, [doc], first_number=first, count_tokens=counter))
            blocks = [b for group in by_doc for b in group]
            outcome = compare(picked, by_doc, blocks, chain, params, emit, cancel)
        timings = {"task_ms": (time.perf_counter() - t) * 1000, "total_ms": (time.perf_counter() - t0) * 1000}
        trace.update(_outcome_trace(outcome, by_doc))
        return self._finish(task, request, picked, blocks, outcome, timings, trace, emit)

    def _finish(self, task: str, request: Any, picked: list[DocumentRef], blocks: list[Any], outcome: Outcome,
                timings: dict[str, float], trace: dict[str, Any], emit: Emit) -> TaskResponse:
        response = _package(task, request.query, picked, blocks, outcome, timings, trace)
        emit("citations", {"stage": "task", **(response.validation or {})})
        emit("inspector", trace)
        emit("complete", response.to_json())
        return response

    def _task(self, request: Any) -> tuple[str | None, tuple[str, ...]]:
        if request.task == "auto":
            intent = detect(request.query)
            if intent is None:
                return None, ()
            return intent.task, tuple(request.documents) or intent.names
        return request.task, tuple(request.documents) or names_of(request.query, request.task)


def in_scope(documents: list[DocumentRef], filters: dict[str, Any]) -> list[DocumentRef]:
    """The documents a request's filters leave (by id, name or file type); all of them without such filters."""
    def values(key: str) -> set[str] | None:
        raw = filters.get(key)
        raw = raw.get("in") if isinstance(raw, dict) else raw
        return None if raw is None else {str(v).lower() for v in (raw if isinstance(raw, list) else [raw])}

    ids, names, types = values("document_id"), values("document_name"), values("file_type")
    return [d for d in documents
            if (ids is None or d.document_id.lower() in ids or d.document_id.split("-")[0].lower() in ids)
            and (names is None or d.document_name.lower() in names or display_name(d.document_name).lower() in names)
            and (types is None or d.document_name.rsplit(".", 1)[-1].lower() in types)]


def _clarify(task: str, resolutions: list[Resolution], picked: list[DocumentRef],
             documents: list[DocumentRef]) -> str | None:
    """The question to ask back, or None when the documents are settled."""
    for r in resolutions:
        if r.ambiguous:
            listed = "\n".join(f"- {display_name(c.document_name)}" for c in r.candidates[:LISTED])
            return f"More than one document matches \"{r.name}\". Which one do you mean?\n\n{listed}"
    for r in resolutions:
        if r.match is None:
            listed = "\n".join(f"- {display_name(d.document_name)}" for d in documents[:LISTED])
            more = f"\n- … and {len(documents) - LISTED} more" if len(documents) > LISTED else ""
            return (f"No document matches \"{r.name}\". The selected indexes hold:\n\n{listed}{more}"
                    if documents else "The selected indexes hold no documents yet.")
    if task == "summary" and len(picked) != 1:
        return "A summary covers one document. Which one do you mean?\n\n" + \
            "\n".join(f"- {display_name(d.document_name)}" for d in picked)
    if task == "compare" and not MIN_DOCUMENTS <= len(picked) <= MAX_DOCUMENTS:
        return f"A comparison needs {MIN_DOCUMENTS} to {MAX_DOCUMENTS} different documents; " \
               f"these names matched {len(picked)}."
    return None


def _outcome_trace(outcome: Outcome, by_doc: list[list[Any]]) -> dict[str, Any]:
    return {"blocks": sum(len(b) for b in by_doc), "backend": outcome.backend,
            "fallbacks": outcome.fallbacks, **{k: v for k, v in outcome.extra.items() if k != "table"},
            "parts": [{"key": p.key, "document_id": p.document_id, "source": p.source,
                       "validation": p.validation, "note": p.note} for p in outcome.parts]}


def _package(task: str, query: str, picked: list[DocumentRef], blocks: list[Any], outcome: Outcome,
             timings: dict[str, float], trace: dict[str, Any]) -> TaskResponse:
    citations = merged_citations(outcome.parts)
    cited = {c["n"] for c in citations}
    sources = [{"n": b.number, "chunk_id": b.candidate.chunk_id, "document_id": b.candidate.document_id,
                "document_name": b.candidate.document_name, "page_start": b.candidate.page_start,
                "page_end": b.candidate.page_end, "score": 1.0, "text": b.text, "truncated": False}
               for b in blocks if b.number in cited]
    usage_total = {"prompt": sum(u["prompt"] for u in outcome.usage.values()),
                   "completion": sum(u["completion"] for u in outcome.usage.values())}
    return TaskResponse(task, query, outcome.answer, answer_source(outcome.parts), outcome.backend, outcome.model,
                        citations, sources, overall_validation(outcome.parts), [d.to_json() for d in picked],
                        [p.to_json() for p in outcome.parts], outcome.extra,
                        {"stages": outcome.usage, "total": usage_total, "backend": outcome.backend},
                        timings, outcome.fallbacks, trace)
