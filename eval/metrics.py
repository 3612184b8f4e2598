"""Retrieval metrics, defined exactly as in eval-data/localgpt/README.md.

- Relevance is binary per chunk: the normalised chunk text contains one of the
  row's normalised `expected` strings. Normalisation collapses whitespace runs
  to one space; it lower-cases both sides unless the gold set is
  case-sensitive (pydocs is).
- recall@k is a hit rate: a `match: any` row counts when any of the top k
  chunks is relevant; a `match: all` row needs the union of the top k to
  contain every expected string.
- MRR is reported at 10 (the reciprocal rank of the first relevant chunk in
  the top 10, else 0), as in the pydocs baseline table.
- nDCG@10 uses binary gains; the ideal ordering is computed over the
  retrieved candidate list, so a query whose candidates hold nothing relevant
  scores 0.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


def normalise(text: str, case_sensitive: bool) -> str:
    collapsed = " ".join(text.split())
    return collapsed if case_sensitive else collapsed.lower()


@dataclass(frozen=True)
class GoldRow:
    id: str
    query: str
    expected: tuple[str, ...]
    match: str = "any"
    dimensions: tuple[tuple[str, str], ...] = ()


def relevance(texts: Sequence[str], row: GoldRow, case_sensitive: bool) -> list[list[bool]]:
    """For each retrieved text, which expected strings it contains."""
    wanted = [normalise(e, case_sensitive) for e in row.expected]
    out = []
    for text in texts:
        norm = normalise(text, case_sensitive)
        out.append([w in norm for w in wanted])
    return out


def recall_at(hits: list[list[bool]], k: int, match: str) -> float:
    top = hits[:k]
    if not top:
        return 0.0
    if match == "all":
        covered = [any(h[i] for h in top) for i in range(len(top[0]))]
        return 1.0 if covered and all(covered) else 0.0
    return 1.0 if any(any(h) for h in top) else 0.0


def mrr_at(hits: list[list[bool]], k: int = 10) -> float:
    for rank, h in enumerate(hits[:k], start=1):
        if any(h):
            return 1.0 / rank
    return 0.0


def ndcg_at(hits: list[list[bool]], k: int = 10) -> float:
    gains = [1.0 if any(h) else 0.0 for h in hits]
    dcg = sum(g / math.log2(i + 2) for i, g in enumerate(gains[:k]))
    ideal = sorted(gains, reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def row_metrics(texts: Sequence[str], row: GoldRow, case_sensitive: bool) -> dict[str, float]:
    hits = relevance(texts, row, case_sensitive)
    return {
        "recall@5": recall_at(hits, 5, row.match),
        "recall@10": recall_at(hits, 10, row.match),
        "recall@20": recall_at(hits, 20, row.match),
        "mrr": mrr_at(hits, 10),
        "ndcg@10": ndcg_at(hits, 10),
    }


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def percentile(values: Sequence[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q
    lo, hi = math.floor(pos), math.ceil(pos)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)
