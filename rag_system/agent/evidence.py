"""Evidence gathering for one question: pooled first stage, one retry, one rerank, expansion.

Split from the pipeline so each stage reads as one call with typed inputs and
outputs: every step returns a new `Evidence` (nothing is filled in place), and
`Stages` (agent/stages.py) times and announces them. Sub-queries (from decomposition) are searched separately and pooled
by reciprocal-rank fusion, so each part contributes its best hits; reranking
then runs once, against the user's whole question.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import docent_native

from rag_system.agent.reformulate import pick_better, reformulate
from rag_system.agent.types import TextGenerator
from rag_system.agent.stages import Stages
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
           stages: Stages, *, retry: bool, generator: TextGenerator | None = None,
           rerank_query: str | None = None) -> Evidence:
    """The first stage (one retry if weak), then rerank/select: each step a new `Evidence`."""
    first = replace(options, rerank=False)
    evidence = stages.run("retrieval", lambda: _search(engine, queries, indexes, first),
                          started={"queries": queries, "mode": options.mode, "k": options.k},
                          done=lambda found: _summary(found.result))
    if retry and evidence.result.evidence_score < WEAK_EVIDENCE:
        evidence = _retry(engine, evidence, queries, indexes, first, stages, generator)
    if options.rerank and evidence.result.candidates:
        evidence = _rerank(engine, evidence, options, stages, rerank_query)
    return evidence


def _retry(engine: RetrievalEngine, evidence: Evidence, queries: list[str], indexes: tuple[str, ...],
           options: RetrievalOptions, stages: Stages, generator: TextGenerator | None) -> Evidence:
    """Weak evidence: search once more with a reformulated query and keep the better of the two."""
    alternative = reformulate(" ".join(queries), [c.text for c in evidence.candidates[:5]], generator)
    if alternative is None:
        return evidence
    second = replace(stages.run("retry", lambda: _search(engine, [alternative], indexes, options)),
                     retried_with=alternative)
    better = pick_better(_Scored(evidence), _Scored(second)).evidence
    before, after = round(evidence.result.evidence_score, 4), round(second.result.evidence_score, 4)
    stages.emit("retrieval_retry", {"query": alternative, "kept": "retry" if better is second else "original",
                                    "evidence_score": after, "original_evidence_score": before,
                                    # localGPT's names for the same figures: what was weak, and how weak
                                    "signal": "evidence_score", "score_before": before, "score_after": after})
    return replace(better, runs=evidence.runs + second.runs)  # the inspector shows both searches


def _rerank(engine: RetrievalEngine, evidence: Evidence, options: RetrievalOptions, stages: Stages,
            query: str | None) -> Evidence:
    reranker, status = engine.reranker()
    if reranker is None:  # said as what it is: no rerank phase that did not run
        why = status.error or "no RERANKER_MODEL is configured"
        stages.emit("rerank_skipped", {"reason": why})
        result = replace(evidence.result, warnings=[*evidence.result.warnings, f"reranking skipped: {why}"])
        return replace(evidence, result=result)
    asked = replace(evidence.result, query=query or evidence.result.query)
    ranked = stages.run("rerank", lambda: engine.rerank(asked, options),
                        started={"count": len(asked.candidates)},
                        done=lambda r: {"kept": len(r.final if r.final is not None else r.candidates),
                                        "warnings": r.warnings, "reranked": r.final is not None})
    return replace(evidence, result=ranked)


def expand(engine: RetrievalEngine, evidence: Evidence, candidates: list[Candidate], window: int,
           indexes: tuple[str, ...]) -> list[Candidate]:
    """`candidates` with their neighbours within `window` chunks, in the same order."""
    order = {c.chunk_id: i for i, c in enumerate(candidates)}
    by_index: dict[str, list[Candidate]] = {}
    for cand in candidates:
        by_index.setdefault(evidence.owners.get(cand.chunk_id, indexes[0]), []).append(cand)
    out: list[Candidate] = []
    for index, group in by_index.items():
        out.extend(expand_neighbours(engine.table(index), group, window))
    return sorted(out, key=lambda c: order.get(c.chunk_id, len(order)))


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
