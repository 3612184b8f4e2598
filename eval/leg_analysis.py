"""Per-leg failure analysis and offline fusion: `python -m eval.leg_analysis --corpus rfc --per-query`.

Why offline: a fusion rule, weight or candidate depth changes nothing that is
stored, so each leg is retrieved once per gold query and depth, by the
engine's own leg functions (rag_system/retrieval/legs.py), from the same
cached index `eval.run_eval` builds, and every arm is fused from those lists
in milliseconds. The `score` and `rrf` arms call the same `docent_native`
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
    """One gold query: each leg's ranked (chunk id, score) list per depth and which chunks are relevant."""

    id: str
    query: str
    match: str
    expected: int
    relevant: dict[str, list[bool]]
    legs: dict[int, dict[str, Ranked]] = field(default_factory=dict)  # per depth collected, per leg


@dataclass(frozen=True)
class Arm:
    """A fusion variant: which legs with which weights, how scores are normalised, how deep each leg is."""

    name: str
    weights: dict[str, float]
    fusion: str = "meanmax"  # meanmax, score (min-max), rrf: native | zclip
    depth: int = 50
    rrf_k: float = 60.0


def collect(corpus: Corpus, settings: Any, embedder: Any, index: str, depths: Sequence[int]) -> list[QueryLegs]:
    """Run the engine's legs (`rag_system.retrieval.legs`), `depth` deep for each of `depths`, for each
    gold row of `corpus` on the built `index`: the same queries, columns and over-fetch as a question."""
    from rag_system.indexing.store import ChunkTable, open_store
    from rag_system.retrieval import legs
    from rag_system.retrieval.first_stage import (
        ANN_REFINE_FACTOR,
        FTS_LEGS,
        VECTOR_LEGS,
        fts_rankings,
        vector_queries,
    )

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
        # Every ranking the engine can make (exact words and the question sentence included): the
        # arms weigh the ones a setting turns off with 0.
        asked = fts_rankings(table, row.query, exact=True)
        vectors = embedder.embed_queries(vector_queries(row.query, focus=True))
        for depth in sorted(set(depths)):
            found = legs.run([*(legs.fts_leg(table, terms, None, depth, column) for terms, column in asked),
                              *(legs.vector_leg(table, vector, None, depth, ANN_REFINE_FACTOR) for vector in vectors)])
            names = [*FTS_LEGS[:len(asked)], *VECTOR_LEGS[:len(vectors)]]
            ranked: dict[str, Ranked] = dict.fromkeys(LEGS, [])
            for name, ranking in zip(names, found):
                if isinstance(ranking, BaseException):
                    raise ranking
                # Chunks missing from the chunk table are dropped (the engine drops them too).
                ranked[name] = [(c, s) for c, s in zip(ranking.ids, ranking.scores) if c in texts]
            item.legs[depth] = ranked
        out.append(item)
    return out


def fuse(item: QueryLegs, arm: Arm, k: int = 20) -> list[str]:
    """The arm's top-k chunk ids for one query."""
    if arm.fusion not in ("score", "meanmax", "rrf", *_NORMALISERS):
        raise ValueError(f"unknown fusion {arm.fusion!r}; use score, meanmax, rrf, {', '.join(_NORMALISERS)}")
    if arm.depth not in item.legs:
        raise ValueError(f"arm {arm.name!r} wants legs {arm.depth} deep; collected: {sorted(item.legs)}")
    legs = item.legs[arm.depth]
    weights_by_leg = dict(arm.weights)
    if not legs["vector_focus"] and "vector" in weights_by_leg:
        # One-sentence query: the engine gives the whole vector weight to the one vector ranking.
        weights_by_leg["vector"] += weights_by_leg.pop("vector_focus", 0.0)
    names = [n for n in LEGS if weights_by_leg.get(n, 0.0) > 0]
    lists = [legs[n] for n in names]
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
    p.add_argument("--depth", type=int, default=100, help="leg depth of the --per-query ranks (the arms use their own depths)")
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
    arms = default_arms(settings)
    depths = sorted({arm.depth for arm in arms} | {args.depth})
    items = collect(corpus, settings, embedder, _index_for(corpus, settings, embedder), depths)
    results = {arm.name: evaluate(items, arm) for arm in arms}
    for name, metrics in results.items():
        sys.stdout.write(f"{corpus.name:<8} {name:<18} " + " ".join(f"{k}={v:.3f}" for k, v in metrics.items()) + "\n")
    if args.per_query:
        default = next(a for a in arms if a.name == "default")
        for item in items:
            ranks = {leg: first_rank(item, [c for c, _ in item.legs[args.depth][leg]]) for leg in LEGS}
            sys.stdout.write(f"{item.id:<12} fused={first_rank(item, fuse(item, default))} "
                             + " ".join(f"{leg}={r}" for leg, r in ranks.items()) + f"  {item.query[:70]}\n")
    if args.json_out:
        args.json_out.write_text(json.dumps({"corpus": corpus.name, "arms": results}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
