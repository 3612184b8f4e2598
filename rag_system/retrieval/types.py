"""Typed inputs and outputs of the retrieval stages."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from common.errors import DomainError
from common.options import MODES
from rag_system.retrieval.locations import chunk_location, quote_location


class RetrievalModeError(DomainError, ValueError):
    """An unknown retrieval mode was requested."""

    status, code = 400, "invalid_option"


def check_mode(mode: str) -> str:
    if mode not in MODES:
        raise RetrievalModeError(f"unknown retrieval mode {mode!r}; use one of {', '.join(MODES)}")
    return mode


@dataclass(frozen=True)
class RetrievalOptions:
    """Per-request retrieval options (built fresh for every request)."""

    mode: str = "hybrid"
    k: int = 20
    filters: dict[str, Any] | None = None
    fusion: str = "meanmax"  # see common.options.FUSIONS
    rrf_k: float = 60.0
    fts_weight: float = 1.0
    vector_weight: float = 1.0
    fts_exact: bool = True  # windowed tables: also rank by exact words (shares fts_weight)
    query_focus: bool = True  # also rank by the question sentence of a compound query (shares vector_weight)
    leg_k: int = 0  # candidates per leg; 0 = max(2k, 50)
    rerank: bool = False
    rerank_depth: int = 10  # the reranker reads the first stage's top this many (0 = all)
    rerank_blend: float = 1.0  # weight of the first stage's rank in the reranked order (0 = reranker alone)
    min_score: float = 0.5
    min_keep: int = 5
    top_k: int = 8

    @property
    def per_leg(self) -> int:
        return self.leg_k or max(2 * self.k, 50)


@dataclass
class Candidate:
    chunk_id: str
    document_id: str
    document_name: str
    chunk_index: int
    page_start: int
    page_end: int
    heading_path: str
    block_type: str
    text: str
    metadata: str
    score: float = 0.0
    fts_rank: int | None = None
    fts_score: float | None = None
    vector_rank: int | None = None
    vector_similarity: float | None = None

    @property
    def place(self) -> str | None:
        """Where the chunk is when a page number does not say it: "Sheet Q3, rows 12–40" (tables)."""
        try:
            meta = json.loads(self.metadata or "{}")
        except ValueError:
            return None
        label = meta.get("label") if isinstance(meta, dict) else None
        return label if isinstance(label, str) and label else None

    def locate(self, quote: str) -> dict[str, Any]:
        """Where `quote` (a sentence of this chunk) is: its page, its lines, the section."""
        return quote_location(self.metadata, self.heading_path, self.page_start, self.page_end, self.text, quote)

    def to_json(self, with_text: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {
            "chunk_id": self.chunk_id, "document_id": self.document_id,
            "document_name": self.document_name, "chunk_index": self.chunk_index,
            "page_start": self.page_start, "page_end": self.page_end,
            "heading_path": self.heading_path, "block_type": self.block_type, "place": self.place,
            "location": chunk_location(self.metadata, self.heading_path, self.page_start, self.page_end),
            "score": round(self.score, 6),
            "ranks": {"fts": self.fts_rank, "vector": self.vector_rank},
            "fts_score": None if self.fts_score is None else round(self.fts_score, 4),
            "vector_similarity": None if self.vector_similarity is None else round(self.vector_similarity, 4),
        }
        if with_text:
            out["text"] = self.text
        return out


@dataclass
class RetrievalResult:
    query: str
    mode: str
    candidates: list[Candidate]
    evidence_score: float
    timings_ms: dict[str, float] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    legs: dict[str, list[str]] = field(default_factory=dict)  # leg -> chunk ids, best first
    leg_scores: dict[str, list[float]] = field(default_factory=dict)  # leg -> its own scores, same order
    # After rerank/select: the kept candidates, and every scored one with why.
    final: list[Candidate] | None = None
    reranked: list[Any] = field(default_factory=list)
    models: dict[str, Any] = field(default_factory=dict)  # the index's embedder, the reranker when it ran

    def to_json(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "mode": self.mode,
            "results": [c.to_json() for c in self.candidates],
            "evidence_score": round(self.evidence_score, 4),
            "timings_ms": {k: round(v, 2) for k, v in self.timings_ms.items()},
            "warnings": list(self.warnings),
            "rerank": [r.to_json() for r in self.reranked],
            "models": self.models,
        }
