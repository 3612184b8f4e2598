"""localGPT's shapes of a stored answer, served next to Docent's own (Documentation/api-gateway.md).

localGPT's client rebuilds a reloaded answer from `metadata.steps` when that list is non-empty,
and reads each entry as its own step (`key`, `label`, `status`, `details`, the answer in the
`final` step's details). Docent records the RAG API's events (`{"type", "data"}`) instead, so a
reloaded answer rendered empty in localGPT's client. Stored turns keep Docent's events under
`metadata.events` (what Docent's web app replays); `metadata.steps` is always localGPT-shaped:
either the steps localGPT's client saved itself, or steps derived here from the events.
"""

from __future__ import annotations

from typing import Any, TypeGuard

#: localGPT's step keys and labels, in its order, with the Docent event that means the step ran.
_STEPS: tuple[tuple[str, str, str], ...] = (
    ("analyze", "Analyzing user question", "analyze"),
    ("decompose", "Generating sub-queries", "decomposition"),
    ("retrieval", "Retrieving context", "retrieval_done"),
    ("retry", "Rechecking weak evidence", "retrieval_retry"),
    ("rerank", "Reranking results", "rerank_done"),
    ("expand", "Expanding context window", "context_expand_done"),
)
_EVENT_OF = {key: event for key, _, event in _STEPS}


def is_event_list(value: Any) -> TypeGuard[list[dict[str, Any]]]:
    """Docent's events (`{"type", "data"}`), as opposed to localGPT's steps (`{"key", "label"}`)."""
    return isinstance(value, list) and bool(value) and all(isinstance(s, dict) and "type" in s and "key" not in s
                                                           for s in value)


def is_step_list(value: Any) -> TypeGuard[list[dict[str, Any]]]:
    return isinstance(value, list) and bool(value) and all(isinstance(s, dict) and "key" in s for s in value)


def split_steps(meta: dict[str, Any]) -> dict[str, Any]:
    """Metadata to store: Docent's events under `events`, localGPT's own steps (if any) under `steps`."""
    out = dict(meta)
    steps = out.pop("steps", None)
    if is_event_list(steps):
        out.setdefault("events", steps)
    elif is_step_list(steps):
        out["steps"] = steps
    return out


def present(message: dict[str, Any]) -> dict[str, Any]:
    """A stored message as both clients read it: `metadata.events` for Docent, `metadata.steps` for localGPT."""
    if message.get("sender") != "assistant":
        return message
    meta = split_steps(message.get("metadata") or {})
    events = meta.get("events")
    if not is_event_list(events):
        return {**message, "metadata": meta}
    if is_step_list(meta.get("steps")):
        meta["steps"] = ran_only(meta["steps"], events)
    else:
        meta["steps"] = legacy_steps(events, message.get("content", ""), meta)
    return {**message, "metadata": meta}


def ran_only(steps: list[dict[str, Any]], events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """localGPT's own saved steps, less the phases Docent's events say did not run.

    localGPT's client starts from a fixed plan (decompose, retry, rerank, ...) and marks every step
    done when the answer completes, so the steps it saves claim phases that never ran (a rerank
    with no reranker installed, a retry that was not needed). The RAG API's events for the same
    turn say what ran: those steps are kept, a skipped rerank says so, the rest are left out.
    """
    seen = _data_by_type(events)
    if "direct_answer" in seen:
        return steps
    out: list[dict[str, Any]] = []
    for step in steps:
        key = step.get("key")
        if key == "rerank" and "rerank_skipped" in seen:
            out.append(_skipped_rerank(seen["rerank_skipped"]))
        elif key in _EVENT_OF and not _ran(key, seen):
            continue
        elif key == "answer" and not (isinstance(step.get("details"), list) and step["details"]):
            continue  # "Answering sub-queries" with no sub-answers: Docent answers a question once
        else:
            out.append(step)
    return out


def _data_by_type(events: list[dict[str, Any]]) -> dict[str, Any]:
    return {e["type"]: e.get("data") or {} for e in events if "type" in e}


def _ran(key: str, seen: dict[str, Any]) -> bool:
    event = _EVENT_OF[key]
    return event in seen and not (key == "rerank" and seen[event].get("reranked") is False)


def _skipped_rerank(data: dict[str, Any]) -> dict[str, Any]:
    reason = data.get("reason") or "no reranker is configured"
    return {"key": "rerank", "label": "Reranking skipped", "status": "done", "details": f"Not reranked: {reason}."}


def legacy_steps(events: list[dict[str, Any]], answer: str, meta: dict[str, Any]) -> list[dict[str, Any]]:
    """localGPT's finished step list for an answer whose pipeline emitted `events`."""
    seen = _data_by_type(events)
    if "direct_answer" in seen or meta.get("route") == "direct" or meta.get("answer_source") == "direct":
        return [{"key": "direct", "label": "Answering directly", "status": "done", "details": answer}]
    status = "error" if meta.get("status") == "error" else "done"
    steps: list[dict[str, Any]] = []
    for key, label, event in _STEPS:
        if key == "rerank" and "rerank_skipped" in seen:
            steps.append(_skipped_rerank(seen["rerank_skipped"]))
            continue
        if not _ran(key, seen):
            continue
        steps.append({"key": key, "label": label, "status": "done", "details": _details(key, seen[event])})
    steps.append({"key": "final", "label": "Final answer", "status": status,
                  "details": {"answer": answer, "source_documents": meta.get("source_documents") or [],
                              "token_usage": meta.get("token_usage")}})
    return steps


def _details(key: str, data: dict[str, Any]) -> Any:
    if key == "decompose":
        return [q for q in data.get("sub_queries", []) if isinstance(q, str)]
    if key == "retry":
        return retry_note(data)
    return {"retrieval": "Retrieval complete.", "rerank": "Reranking complete.",
            "expand": "Context expansion complete.", "analyze": ""}.get(key, "")


def retry_note(data: dict[str, Any]) -> str:
    kept = "retried and kept the better result set" if data.get("kept") == "retry" else \
        "retry did not improve it, kept the original"
    return f"Weak evidence (evidence_score {data.get('original_evidence_score')}); {kept}."


def present_index(index: dict[str, Any]) -> dict[str, Any]:
    """An index with the top-level metadata keys localGPT's index panel reads (`SessionIndexInfo`).

    Only facts Docent knows are added, and none that the metadata already has: the embedder the
    index was built with, its chunk count, and the build options that were applied."""
    meta = dict(index.get("metadata") or {})
    last_build = meta.get("last_build")
    build = last_build if isinstance(last_build, dict) else {}
    facts = {"embedding_model": build.get("embedding_model") or meta.get("built_with_embedder") or meta.get("embedder"),
             "vector_dimensions": build.get("vector_dimensions"), "chunk_size": build.get("chunk_size"),
             "total_chunks": (build.get("index_totals") or {}).get("chunks"),
             "retrieval_mode": "hybrid",  # every index has both the vector and the full-text table
             **(meta.get("applied_options") or {})}
    for key, value in facts.items():
        if value is not None:
            meta.setdefault(key, value)
    return {**index, "metadata": meta}
