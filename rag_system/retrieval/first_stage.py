"""First stage: LanceDB full-text and vector search in parallel, fused natively.

The legs run as coroutines on LanceDB's event loop (rag_system/retrieval/
legs.py says why): the full-text ones start before the question is
embedded, the vector ones once it is; the winners' rows are read after
fusion, in one more hand-over.

Both legs get the same prefilter, so a filter can never let a chunk in
through one leg only. Fusion (reciprocal rank, de-duplicated by chunk id,
deterministic ties) and the evidence contrast score run in `docent_native`.
If the full-text leg fails (for any reason the sanitiser did not foresee),
hybrid search degrades to vector search with a warning instead of an error.
On an index built with windows (Documentation/indexing.md) both legs score a
chunk by its best window, and the full-text leg ranks twice (configured
analyzer, exact words); the default fusion is weighted min-max scores.
"""

from __future__ import annotations

import logging
import time
from typing import Any, Literal

import docent_native

from common.lexicon import STOP_WORDS
from common.options import FUSIONS
from rag_system.embedding.base import Embedder
from rag_system.indexing.store import ChunkTable
from rag_system.indexing.windows import EXACT_COLUMN, TEXT_COLUMN
from rag_system.retrieval import legs
from rag_system.retrieval.filters import compile_filters
from rag_system.retrieval.fts_query import sanitize_fts_query
from rag_system.retrieval.query_focus import focus_question
from rag_system.retrieval.row_maps import RowMaps
from rag_system.retrieval.types import Candidate, RetrievalModeError, RetrievalOptions, RetrievalResult, check_mode

log = logging.getLogger(__name__)

COLUMNS = ["chunk_id", "document_id", "document_name", "chunk_index", "page_start", "page_end",
           "heading_path", "block_type", "text", "metadata"]


#: Names of the full-text rankings in `RetrievalResult.legs`, in fusion order.
FTS_LEGS = ("fts", "fts_exact")
#: Names of the vector rankings: the whole query, then its question sentence (`query_focus`).
VECTOR_LEGS = ("vector", "vector_focus")


#: With an ANN index (`ANN_MIN_CHUNKS`), re-score this many times k candidates with
#: the stored vectors: PQ codes alone cost pydocs' vector leg 0.549 -> 0.382
#: nDCG@10, re-scored 0.539 (Documentation/evaluation.md). Exact search ignores it.
ANN_REFINE_FACTOR = 10


class FullTextUnavailableError(RuntimeError):
    """The table has no usable full-text index."""


class FirstStage:
    """Stateless apart from the shared embedder."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder

    def search(self, table: ChunkTable, query: str, options: RetrievalOptions,
               embedder: Embedder | None = None, maps: RowMaps | None = None) -> RetrievalResult:
        """Rank `table`'s chunks for `query`; `embedder` is the index's own (default: this stage's).

        `maps` (the engine's, per index) tells the legs their hits' chunk ids
        from the hits' row addresses (rag_system/retrieval/chunk_runs.py).
        """
        embedder = embedder or self.embedder
        mode = check_mode(options.mode)
        if options.fusion not in FUSIONS:
            raise RetrievalModeError(f"unknown fusion {options.fusion!r}; use one of {', '.join(FUSIONS)}")
        where = compile_filters(options.filters)
        timings: dict[str, float] = {}
        warnings: list[str] = []
        started = time.perf_counter()
        fts_legs = [legs.fts_leg(table, terms, where, options.per_leg, column, maps)
                    for terms, column in (fts_rankings(table, query, options.fts_exact)
                                          if mode in ("hybrid", "fts_only") else [])]
        # The full-text legs start before the question is embedded: the embedding takes one core
        # (rag_system/embedding/onnx_query.py), LanceDB's threads the other (evaluation.md, "A million chunks").
        fts_pending = legs.start(fts_legs)
        vectors: list[Any] = []
        if mode in ("hybrid", "vector_only"):
            t0 = time.perf_counter()
            vectors = list(embedder.embed_queries(vector_queries(query, options.query_focus)))
            timings["embed_ms"] = (time.perf_counter() - t0) * 1000
        vec_legs = [legs.vector_leg(table, vector, where, options.per_leg, ANN_REFINE_FACTOR, maps)
                    for vector in vectors]
        vec_results = legs.run(vec_legs)
        fts_results = fts_pending.result()
        vec_lists = [_ranking(result) for result in vec_results]
        if vec_lists:  # the legs ran side by side: the slower one is the stage's wait
            timings["vector_ms"] = max(r.ms for r in vec_lists)
        fts_lists: list[legs.Ranking] = []
        try:
            fts_lists = [_ranking(result) for result in fts_results]
            timings["fts_ms"] = max((r.ms for r in fts_lists), default=0.0)
            if fts_legs and not any(r.ids for r in fts_lists) and not table.has_fts_index():
                # LanceDB answers an un-indexed full-text query with nothing, which
                # would silently turn hybrid into vector search.
                raise FullTextUnavailableError(f"index {table.index!r} has no full-text index; rebuild it")
        except Exception as exc:  # degrade, never fail the whole search
            if mode == "fts_only":
                raise
            fts_lists = []
            log.warning("full-text leg failed, using vector results only: %s", exc)
            warnings.append(f"full-text search failed ({type(exc).__name__}); results are vector-only")
        t0 = time.perf_counter()
        candidates = _fuse(table, fts_lists, vec_lists, options)
        similarities = [c.vector_similarity for c in candidates if c.vector_similarity is not None]
        evidence = float(docent_native.evidence_contrast(similarities)) if similarities else 0.0
        timings["fuse_ms"] = (time.perf_counter() - t0) * 1000
        timings["first_stage_ms"] = (time.perf_counter() - started) * 1000
        return RetrievalResult(
            query=query, mode=mode, candidates=candidates, evidence_score=evidence,
            timings_ms=timings, warnings=warnings,
            legs={"fts": [], "vector": [],
                  **{name: ranking.ids for name, ranking in zip(FTS_LEGS, fts_lists)},
                  **{name: ranking.ids for name, ranking in zip(VECTOR_LEGS, vec_lists)}},
            leg_scores={**{name: ranking.scores for name, ranking in zip(FTS_LEGS, fts_lists)},
                        **{name: ranking.scores for name, ranking in zip(VECTOR_LEGS, vec_lists)}},
        )


def _ranking(result: legs.Ranking | BaseException) -> legs.Ranking:
    """A leg's ranking, or its failure raised."""
    if isinstance(result, BaseException):
        raise result
    return result


def vector_queries(query: str, focus: bool) -> list[str]:
    """What the vector rankings embed: the whole query, then (with `focus`) its question sentence if it has one."""
    question = focus_question(query) if focus else None
    return [query] + ([question] if question else [])


def fts_rankings(table: ChunkTable, query: str, exact: bool) -> list[tuple[str, str]]:
    """(terms, column) per full-text ranking: the configured analyzer, plus exact words on windowed tables."""
    terms = sanitize_fts_query(query)
    if not terms:
        return []
    if table.windows is not None and exact:
        return [(terms, TEXT_COLUMN), (content_terms(terms), EXACT_COLUMN)]
    return [(terms, TEXT_COLUMN)]


def content_terms(terms: str) -> str:
    """The exact-words ranking's query: `terms` without stop words (all of them if nothing else is left).

    Why: the exact column indexes stop words, so "what", "is", "the" in a question walked the longest
    posting lists of the index: at 300,000 chunks that ranking took 62-70 ms against 18-21 ms without
    them, and nDCG@10 rose on rfc (+0.043), docs (+0.021) and mixed (+0.007) while pydocs, whose
    questions name keywords such as `with` and `is`, lost 0.014 (Documentation/evaluation.md).
    """
    kept = " ".join(word for word in terms.split() if word not in STOP_WORDS)
    return kept or terms


def _fuse(table: ChunkTable, fts_lists: list[legs.Ranking], vec_lists: list[legs.Ranking],
          options: RetrievalOptions) -> list[Candidate]:
    """Fuse the full-text rankings and the vector rankings in `docent_native`, then read the winners' rows.

    The full-text weight is shared equally by its analyzers and the vector
    weight by its rankings (whole query, question sentence), so neither extra
    ranking shifts the balance between the two kinds of evidence. A
    candidate's `fts_rank`/`fts_score` and `vector_rank`/`vector_similarity`
    come from the first ranking of that kind that holds it.

    Why rows last: the legs rank ids only, and one lookup of the k fused ids
    (a BTREE on `chunk_id`) replaces reading every leg's 50 rows of text; at
    a million chunks each unindexed lookup was a scan.
    """
    fts_share = options.fts_weight / max(1, len(fts_lists))
    vec_share = options.vector_weight / max(1, len(vec_lists))
    rankings = [ranking.ids for ranking in (*fts_lists, *vec_lists)]
    weights = [fts_share] * len(fts_lists) + [vec_share] * len(vec_lists)
    if options.fusion == "rrf":
        fused = docent_native.rrf_fuse(rankings, options.rrf_k, weights, options.k)
    else:
        scores = [ranking.scores for ranking in (*fts_lists, *vec_lists)]
        floor: Literal["min", "mean"] = "mean" if options.fusion == "meanmax" else "min"
        fused = docent_native.score_fuse(rankings, scores, weights, options.k, floor=floor)
    rows = {row["chunk_id"]: row for row in legs.rows_by_id(table, [chunk_id for chunk_id, _ in fused], COLUMNS)}
    fts_first, vec_first = _positions(fts_lists), _positions(vec_lists)
    out = []
    for chunk_id, score in fused:
        if chunk_id not in rows:  # deleted between the legs and the lookup: a newer version of its document
            continue
        cand = Candidate(**{name: rows[chunk_id][name] for name in COLUMNS}, score=float(score))
        if chunk_id in fts_first:
            cand.fts_rank, cand.fts_score = fts_first[chunk_id]
        if chunk_id in vec_first:
            cand.vector_rank, cand.vector_similarity = vec_first[chunk_id]
        out.append(cand)
    return out


def _positions(rankings: list[legs.Ranking]) -> dict[str, tuple[int, float]]:
    """Per chunk, (rank, score) in the first of `rankings` that holds it (dicts built by C, no Python loop)."""
    first: dict[str, tuple[int, float]] = {}
    for ranking in reversed(rankings):  # an earlier ranking overwrites a later one's entry
        first.update(zip(ranking.ids, zip(range(1, len(ranking.ids) + 1), ranking.scores)))
    return first
