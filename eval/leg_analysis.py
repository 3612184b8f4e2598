"""Per-leg failure analysis and offline fusion: `python -m eval.leg_analysis --corpus rfc --per-query`.

Why offline: a fusion rule, weight or candidate depth changes nothing that is
stored, so each leg is retrieved once per gold query (from the same cached
index `eval.run_eval` builds) and every arm is fused from those lists in
milliseconds. The `score` and `rrf` arms call the same `docent_native`
functions as the engine, so the `default` arm reproduces the harness's hybrid
figures exactly (tested). `--per-query` shows where each leg and the fused
list put the first relevant chunk: the answer to "why does fusion lose it".
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import docent_native

from eval.corpora import (
    ALL,
    Corpus,
    add_corpus_arguments,
    check_corpus_arguments,
    custom_corpus,
    known_corpora,
    load_gold,
)
from eval.metrics import mean, mrr_at, ndcg_at, recall_at, relevance

log = logging.getLogger("eval.leg_analysis")

#: Leg names, in the engine's fusion order (`first_stage.FTS_LEGS`, then `VECTOR_LEGS`).
LEGS = ("fts", "fts_exact", "vector", "vector_focus")
Ranked = list[tuple[str, float]]


@dataclass
class QueryLegs:
    """One gold query: each leg's ranked (chunk id, score) list and which chunks are relevant."""

    id: str
    query: str
    match: str
    expected: int
    relevant: dict[str, list[bool]]
    legs: dict[str, Ranked] = field(default_factory=dict)


@dataclass(frozen=True)
class Arm:
    """A fusion variant: which legs with which weights, how scores are normalised, how deep each leg is."""

    name: str
    weights: dict[str, float]
    fusion: str = "meanmax"  # meanmax, score (min-max), rrf: native | zclip
    depth: int = 50
    rrf_k: float = 60.0


def collect(corpus: Corpus, settings: Any, embedder: Any, index: str, depth: int) -> list[QueryLegs]:
    """Retrieve every leg `depth` deep for each gold row of `corpus` from the built `index`."""
    from rag_system.indexing.store import ChunkTable, open_store
    from rag_system.indexing.windows import EXACT_COLUMN, TEXT_COLUMN
    from rag_system.retrieval.first_stage import content_terms
    from rag_system.retrieval.fts_query import sanitize_fts_query
    from rag_system.retrieval.query_focus import focus_question

    table = ChunkTable.open(open_store(settings), index, embedder.identity)
    if table.windows is None:
        raise ValueError(f"index {index!r} has no window table; the analysis covers the windowed layout")
    texts = {r["chunk_id"]: r["text"] for r in
             table.table.search().select(["chunk_id", "text"]).limit(None).to_list()}
    ids = list(texts)
    out = []
    for row in load_gold(corpus.gold):
        hits = relevance([texts[c] for c in ids], row, corpus.case_sensitive)
        item = QueryLegs(row.id, row.query, row.match, len(row.expected),
                         {c: h for c, h in zip(ids, hits) if any(h)})
        terms = sanitize_fts_query(row.query)
        # the engine's own queries: the exact-words ranking asks content words (first_stage.content_terms)
        for name, column, asked in (("fts", TEXT_COLUMN, terms), ("fts_exact", EXACT_COLUMN, content_terms(terms))):
            item.legs[name] = _window_hits(table, asked, depth, column, texts)
        focus = focus_question(row.query)
        vectors = embedder.embed_queries([row.query] + ([focus] if focus else []))
        for name, vector in zip(("vector", "vector_focus"), vectors):
            found = (table.table.search(vector, vector_column_name=table.vector_column).distance_type("cosine")
                     .select(["chunk_id", "_distance"]).limit(depth).to_list())
            item.legs[name] = [(r["chunk_id"], 1.0 - float(r["_distance"])) for r in found]
        item.legs.setdefault("vector_focus", [])
        out.append(item)
    return out


def _window_hits(table: Any, terms: str, depth: int, column: str, texts: dict[str, str]) -> Ranked:
    """Window-level hits, best first (chunk id per window), as many as the engine fetches at `depth`."""
    from lancedb.query import MatchQuery

    from rag_system.indexing.windows import OVERFETCH

    if not terms:
        return []
    hits = (table.windows.table.search(MatchQuery(terms, column), query_type="fts")
            .select(["chunk_id", "_score"]).limit(depth * OVERFETCH).to_list())
    # Hits of chunks missing from the chunk table are dropped (the engine drops them too).
    return [(h["chunk_id"], float(h["_score"] or 0.0)) for h in hits if h["chunk_id"] in texts]


def fuse(item: QueryLegs, arm: Arm, k: int = 20) -> list[str]:
    """The arm's top-k chunk ids for one query."""
    if arm.fusion not in ("score", "meanmax", "rrf", *_NORMALISERS):
        raise ValueError(f"unknown fusion {arm.fusion!r}; use score, meanmax, rrf, {', '.join(_NORMALISERS)}")
    weights_by_leg = dict(arm.weights)
    if not item.legs.get("vector_focus") and "vector" in weights_by_leg:
        # One-sentence query: the engine gives the whole vector weight to the one vector ranking.
        weights_by_leg["vector"] += weights_by_leg.pop("vector_focus", 0.0)
    names = [n for n in LEGS if weights_by_leg.get(n, 0.0) > 0]
    lists = [_top(item.legs[n], arm.depth, not n.startswith("vector")) for n in names]
    weights = [weights_by_leg[n] for n in names]
    rankings = [[c for c, _ in lst] for lst in lists]
    if arm.fusion == "rrf":
        return [c for c, _ in docent_native.rrf_fuse(rankings, arm.rrf_k, weights, k)]
    if arm.fusion in ("score", "meanmax"):
        scores = [[s for _, s in lst] for lst in lists]
        floor = "mean" if arm.fusion == "meanmax" else "min"
        return [c for c, _ in docent_native.score_fuse(rankings, scores, weights, k, floor=floor)]
    normalise = _NORMALISERS[arm.fusion]
    total: dict[str, float] = {}
    first: dict[str, tuple[int, int]] = {}
    for i, (lst, weight) in enumerate(zip(lists, weights)):
        for pos, (chunk_id, value) in enumerate(zip((c for c, _ in lst), normalise([s for _, s in lst]))):
            total[chunk_id] = total.get(chunk_id, 0.0) + weight * value
            first.setdefault(chunk_id, (i, pos))
    return sorted(total, key=lambda c: (-total[c], first[c]))[:k]


def _top(ranked: Ranked, depth: int, windows: bool = False) -> Ranked:
    """A leg's first `depth` chunks; a full-text leg's windows are reduced to each chunk's best
    one within the `depth * OVERFETCH` hits the engine would fetch (`WindowTable.search_chunks`)."""
    from rag_system.indexing.windows import OVERFETCH

    if not windows:
        return ranked[:depth]
    best: dict[str, float] = {}
    for chunk_id, score in ranked[: depth * OVERFETCH]:
        best.setdefault(chunk_id, score)
        if len(best) >= depth:
            break
    return list(best.items())


def _zclip(scores: Sequence[float]) -> list[float]:
    """Standard scores, below-mean ones as 0: how far a candidate stands out of its own leg."""
    if len(scores) < 2 or max(scores) == min(scores):
        return [1.0] * len(scores)
    mu = sum(scores) / len(scores)
    sd = math.sqrt(sum((s - mu) ** 2 for s in scores) / len(scores))
    return [max(0.0, (s - mu) / sd) for s in scores]


_NORMALISERS: dict[str, Callable[[Sequence[float]], list[float]]] = {"zclip": _zclip}


def evaluate(items: list[QueryLegs], arm: Arm) -> dict[str, float]:
    per = [_metrics(item, fuse(item, arm)) for item in items]
    return {name: round(mean([p[name] for p in per]), 4) for name in per[0]} if per else {}


def _metrics(item: QueryLegs, ranked: list[str]) -> dict[str, float]:
    """The harness's metrics (eval.metrics) from precomputed relevance."""
    none = [False] * item.expected
    hits = [item.relevant.get(c, none) for c in ranked]
    return {"recall@5": recall_at(hits, 5, item.match), "recall@10": recall_at(hits, 10, item.match),
            "recall@20": recall_at(hits, 20, item.match), "mrr": mrr_at(hits, 10), "ndcg@10": ndcg_at(hits, 10)}


def first_rank(item: QueryLegs, ranked: Sequence[str]) -> int | None:
    return next((i for i, c in enumerate(ranked, start=1) if c in item.relevant), None)


def default_arms(settings: Any) -> list[Arm]:
    """The engine's default and the variants evaluation.md reports."""
    share = settings.fts_weight / (2 if settings.fts_exact else 1)
    vec = settings.vector_weight / (2 if settings.query_focus else 1)
    vectors = {"vector": vec, "vector_focus": vec if settings.query_focus else 0.0}
    both = {"fts": share, "fts_exact": share if settings.fts_exact else 0.0, **vectors}
    return [
        Arm("fts_only", {"fts": share, "fts_exact": both["fts_exact"]}),
        Arm("vector_only", vectors),
        Arm("default", both, settings.fusion, rrf_k=settings.rrf_k),
        Arm("rrf k=60", both, "rrf"),
        Arm("depth 30", both, settings.fusion, depth=30),
        Arm("depth 100", both, settings.fusion, depth=100),
        Arm("zclip", both, "zclip"),
        Arm("min-max scores", both, "score"),
        Arm("vector 1.5", {**both, **{k: v * 1.5 for k, v in vectors.items()}}, settings.fusion,
            rrf_k=settings.rrf_k),
        Arm("vector 2", {**both, **{k: v * 2 for k, v in vectors.items()}}, settings.fusion, rrf_k=settings.rrf_k),
    ]


def _index_for(corpus: Corpus, settings: Any, embedder: Any) -> str:
    from eval.run_eval import _index_name
    from rag_system.indexing.builder import build_index

    index = _index_name(corpus, settings)
    build_index(list(corpus.sources), index, settings, embedder=embedder)  # a no-op when cached
    return index


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m eval.leg_analysis", description=__doc__.split("\n")[0])
    add_corpus_arguments(p, ALL)
    p.add_argument("--depth", type=int, default=100, help="candidates kept per leg (arms use up to this)")
    p.add_argument("--per-query", action="store_true", help="first relevant rank per leg and fused, per row")
    args = p.parse_args(argv)
    check_corpus_arguments(p, args)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, stream=sys.stderr,
                        format="%(levelname)s %(name)s: %(message)s")
    from eval.run_eval import _overrides
    from rag_system.config import load_settings
    from rag_system.embedding.registry import shared_embedder

    settings = load_settings().with_overrides(data_dir=str(args.cache_dir), **_overrides(args.set))
    corpus = custom_corpus(args.docs, args.gold, args.case_sensitive) if args.docs \
        else known_corpora(args.data_dir)[args.corpus]
    embedder = shared_embedder(settings)  # `--set embedder=bge-small` analyses a bge index
    items = collect(corpus, settings, embedder, _index_for(corpus, settings, embedder), args.depth)
    arms = default_arms(settings)
    results = {arm.name: evaluate(items, arm) for arm in arms}
    for name, metrics in results.items():
        sys.stdout.write(f"{corpus.name:<8} {name:<18} " + " ".join(f"{k}={v:.3f}" for k, v in metrics.items()) + "\n")
    if args.per_query:
        default = next(a for a in arms if a.name == "default")
        for item in items:
            ranks = {leg: first_rank(item, [c for c, _ in _top(item.legs[leg], args.depth, not leg.startswith("vector"))])
                     for leg in LEGS}
            sys.stdout.write(f"{item.id:<12} fused={first_rank(item, fuse(item, default))} "
                             + " ".join(f"{leg}={r}" for leg, r in ranks.items()) + f"  {item.query[:70]}\n")
    if args.json_out:
        args.json_out.write_text(json.dumps({"corpus": corpus.name, "arms": results}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
