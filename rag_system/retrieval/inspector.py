"""The evidence inspector: enough of a run's inner state to explain its answer.

Why a separate, bounded record: the full first stage returns 50+ candidates
per leg and per query; the inspector keeps the top `LEG_TOP` of each leg
(with that leg's own rank and score), the fused list, the reranker's
keep/drop reasons, the packed blocks and the validator's findings, which is
what a user needs to see why a passage did or did not reach the answer.
"""

from __future__ import annotations

from typing import Any

from rag_system.retrieval.evidence import PackedContext
from rag_system.retrieval.types import Candidate, RetrievalResult

LEG_TOP = 10
FUSED_TOP = 20


def retrieval_trace(result: RetrievalResult, index: str | None = None) -> dict[str, Any]:
    """One first-stage search: per-leg rankings, the fused list, and what the reranker kept and why."""
    known = {c.chunk_id: c for c in result.candidates}
    legs: dict[str, list[dict[str, Any]]] = {}
    for leg, ids in result.legs.items():
        if not ids:
            continue
        scores = result.leg_scores.get(leg, [])
        legs[leg] = [_leg_entry(rank, chunk_id, scores[rank - 1] if rank <= len(scores) else None,
                                known.get(chunk_id))
                     for rank, chunk_id in enumerate(ids[:LEG_TOP], start=1)]
    final = {c.chunk_id for c in result.final} if result.final is not None else None
    return {
        "query": result.query, "index": index, "mode": result.mode,
        "evidence_score": round(result.evidence_score, 4),
        "legs": legs,
        "fused": [{"rank": i, "chunk_id": c.chunk_id, "document_name": c.document_name, "page": c.page_start,
                   "score": round(c.score, 4), "ranks": {"fts": c.fts_rank, "vector": c.vector_rank},
                   "kept": None if final is None else c.chunk_id in final}
                  for i, c in enumerate(result.candidates[:FUSED_TOP], start=1)],
        "rerank": [r.to_json() for r in result.reranked],
        "warnings": list(result.warnings),
    }


def _leg_entry(rank: int, chunk_id: str, score: float | None, candidate: Candidate | None) -> dict[str, Any]:
    entry: dict[str, Any] = {"rank": rank, "chunk_id": chunk_id,
                             "score": None if score is None else round(score, 4)}
    if candidate is not None:
        entry.update(document_name=candidate.document_name, page=candidate.page_start)
    return entry


def answer_trace(queries: list[str], runs: list[tuple[str, RetrievalResult]], retried_with: str | None,
                 packed: PackedContext, answer: dict[str, Any], scope: dict[str, Any] | None) -> dict[str, Any]:
    """A question's inspector: queries, each search, the packed blocks, and the validator's findings."""
    return {
        "kind": "qa",
        "queries": list(queries) + ([retried_with] if retried_with else []),
        "document_scope": scope,
        "searches": [retrieval_trace(result, index) for index, result in runs],
        "packed": {"budget_tokens": packed.budget_tokens, "used_tokens": packed.used_tokens,
                   "blocks": [{"n": b.number, "chunk_id": b.candidate.chunk_id,
                               "document_name": b.candidate.document_name, "page": b.candidate.page_start,
                               "tokens": b.tokens, "truncated": b.truncated, "in_prompt": b.in_prompt}
                              for b in packed.blocks],
                   "dropped": [c.chunk_id for c in packed.dropped]},
        "validation": {"first": answer.get("first_validation"), "final": answer.get("validation"),
                       "answer_source": answer.get("answer_source"),
                       "refusal_reason": answer.get("refusal_reason")},
    }
