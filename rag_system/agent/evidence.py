"""Evidence gathering for one question: pooled first stage, one retry, one rerank, expansion.

Split from the pipeline so each stage reads as one call with typed inputs and
outputs. Sub-queries (from decomposition) are searched separately and pooled
by reciprocal-rank fusion, so each part contributes its best hits; reranking
then runs once, against the user's whole question.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any

import docent_native

from rag_system.agent.reformulate import pick_better, reformulate
from rag_system.agent.types import TextGenerator
from rag_system.generation.synthesis import Emit
from rag_system.retrieval.engine import RetrievalEngine
from rag_system.retrieval.expand import expand_neighbours
from rag_system.retrieval.types import Candidate, RetrievalOptions, RetrievalResult

#: Evidence contrast (top vs background, in standard deviations) below which
#: the first stage is retried once with a reformulated query.
WEAK_EVIDENCE = 2.0


@dataclass
class Evidence:
    result: RetrievalResult
    owners: dict[str, str] = field(default_factory=dict)  # chunk id -> index name
    retried_with: str | None = None
    runs: list[tuple[str, RetrievalResult]] = field(default_factory=list)  # (index, result) per first-stage search

    @property
    def candidates(self) -> list[Candidate]:
        return self.result.final if self.result.final is not None else self.result.candidates


def gather(engine: RetrievalEngine, queries: list[str], indexes: tuple[str, ...], options: RetrievalOptions,
           emit: Emit, timings: dict[str, float], *, retry: bool, generator: TextGenerator | None = None,
           rerank_query: str | None = None) -> Evidence:
    first = replace(options, rerank=False)
    emit("retrieval_started", {"queries": queries, "mode": options.mode, "k": options.k})
    t = time.perf_counter()
    evidence = _search(engine, queries, indexes, first)
    timings["retrieval_ms"] = (time.perf_counter() - t) * 1000
    emit("retrieval_done", _summary(evidence.result))
    if retry and evidence.result.evidence_score < WEAK_EVIDENCE:
        top = [c.text for c in evidence.candidates[:5]]
        alternative = reformulate(" ".join(queries), top, generator)
        if alternative is not None:
            t = time.perf_counter()
            second = _search(engine, [alternative], indexes, first)
            second.retried_with = alternative
            timings["retry_ms"] = (time.perf_counter() - t) * 1000
            better = pick_better(_Scored(evidence), _Scored(second)).evidence
            emit("retrieval_retry", {"query": alternative, "kept": "retry" if better is second else "original",
                                     "evidence_score": round(second.result.evidence_score, 4),
                                     "original_evidence_score": round(evidence.result.evidence_score, 4),
                                     # localGPT's names for the same figures: what was weak, and how weak
                                     "signal": "evidence_score", "score_before": round(evidence.result.evidence_score, 4),
                                     "score_after": round(second.result.evidence_score, 4)})
            runs = evidence.runs + second.runs  # the inspector shows both searches
            evidence = better
            evidence.runs = runs
    if options.rerank and evidence.result.candidates:
        reranker, status = engine.reranker()
        if reranker is None:  # said as what it is: no rerank phase that did not run
            why = status.error or "no RERANKER_MODEL is configured"
            evidence.result.warnings.append(f"reranking skipped: {why}")
            emit("rerank_skipped", {"reason": why})
            return evidence
        emit("rerank_started", {"count": len(evidence.result.candidates)})
        t = time.perf_counter()
        result = evidence.result
        result.query = rerank_query or result.query
        engine.rerank(result, options)
        timings["rerank_ms"] = (time.perf_counter() - t) * 1000
        emit("rerank_done", {"kept": len(evidence.candidates), "warnings": result.warnings,
                             "reranked": result.final is not None})
    return evidence


def expand(engine: RetrievalEngine, evidence: Evidence, candidates: list[Candidate], window: int,
           indexes: tuple[str, ...], emit: Emit, timings: dict[str, float]) -> list[Candidate]:
    emit("context_expand_started", {"window": window, "count": len(candidates)})
    t = time.perf_counter()
    order = {c.chunk_id: i for i, c in enumerate(candidates)}
    by_index: dict[str, list[Candidate]] = {}
    for cand in candidates:
        by_index.setdefault(evidence.owners.get(cand.chunk_id, indexes[0]), []).append(cand)
    out: list[Candidate] = []
    for index, group in by_index.items():
        out.extend(expand_neighbours(engine.table(index), group, window))
    out.sort(key=lambda c: order.get(c.chunk_id, len(order)))
    timings["expand_ms"] = (time.perf_counter() - t) * 1000
    emit("context_expand_done", {"count": len(out)})
    return out


@dataclass
class _Scored:
    evidence: Evidence

    @property
    def evidence_score(self) -> float:
        return self.evidence.result.evidence_score


def _search(engine: RetrievalEngine, queries: list[str], indexes: tuple[str, ...],
            options: RetrievalOptions) -> Evidence:
    results: list[RetrievalResult] = []
    owners: dict[str, str] = {}
    for query in queries:
        for index in indexes:
            r = engine.retrieve(index, query, options)
            owners.update({c.chunk_id: index for c in r.candidates if c.chunk_id not in owners})
            results.append(r)
    runs = [(index, r) for (index, r) in zip([i for _ in queries for i in indexes], results)]
    if len(results) == 1:
        return Evidence(results[0], owners, runs=runs)
    return Evidence(_pool(results, options.k, " ".join(queries)), owners, runs=runs)


def _pool(results: list[RetrievalResult], k: int, query: str) -> RetrievalResult:
    """Reciprocal-rank fusion of several result lists (sub-queries and/or indexes)."""
    by_id: dict[str, Candidate] = {}
    for r in results:
        for c in r.candidates:
            by_id.setdefault(c.chunk_id, c)
    fused = docent_native.rrf_fuse([[c.chunk_id for c in r.candidates] for r in results], 60.0, None, k)
    pooled = [replace(by_id[key], score=score) for key, score in fused]
    timings: dict[str, float] = {}
    for r in results:
        for name, value in r.timings_ms.items():
            timings[name] = timings.get(name, 0.0) + value
    return RetrievalResult(query=query, mode=results[0].mode, candidates=pooled,
                           evidence_score=max(r.evidence_score for r in results), timings_ms=timings,
                           warnings=[w for r in results for w in r.warnings])


def _summary(result: RetrievalResult) -> dict[str, Any]:
    return {"count": len(result.candidates), "evidence_score": round(result.evidence_score, 4),
            "timings_ms": {k: round(v, 1) for k, v in result.timings_ms.items()}, "warnings": result.warnings,
            "top": [{"document_name": c.document_name, "page_start": c.page_start, "score": round(c.score, 4)}
                    for c in result.candidates[:5]]}
