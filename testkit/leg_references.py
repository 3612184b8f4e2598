"""Synchronous references for the first stage's legs (rag_system/retrieval/legs.py), for tests only.

The legs are coroutines on LanceDB's asynchronous handles that keep each
chunk's best window with Arrow kernels; these ask the same questions through
LanceDB's synchronous query builder and keep the best window with a plain
loop, so a test can hold the two to the same rankings.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from rag_system.indexing import window_vectors, windows


def best_per_chunk(hits: pa.Table, column: str, limit: int) -> list[tuple[str, float]]:
    """The first hit of each chunk, at most `limit` chunks: hits come best first, so it is its best window."""
    best: dict[str, float] = {}
    for chunk_id, value in zip(hits.column("chunk_id").to_pylist(), hits.column(column).to_pylist()):
        if chunk_id not in best:
            best[chunk_id] = float(value or 0.0)
            if len(best) >= limit:
                break
    return list(best.items())


def fts_chunks(table: windows.WindowTable, terms: str, where: str | None, limit: int,
               column: str = windows.TEXT_COLUMN) -> list[tuple[str, float]]:
    """Chunk ids ranked by their best window's BM25 score in `column`, best first, at most `limit`."""
    builder = table.table.search(windows.match_query(terms, column), query_type="fts")
    if where:
        builder = builder.where(where, prefilter=True)
    hits = builder.select(["chunk_id", "_score"]).limit(limit * windows.OVERFETCH).to_arrow()
    return best_per_chunk(hits, "_score", limit)


def vector_chunks(table: window_vectors.WindowVectorTable, vector: Any, where: str | None,
                  limit: int) -> list[tuple[str, float]]:
    """Chunk ids ranked by their best window's cosine distance, best first, at most `limit`."""
    builder = table.table.search(vector, vector_column_name="vector").distance_type("cosine")
    if table.ann_kind() == "IvfPq":
        builder = builder.nprobes(window_vectors.PQ_NPROBES).refine_factor(window_vectors.PQ_REFINE)
    else:  # HNSW (the beam), or exact search, which ignores it
        builder = builder.ef(table.search_beam(limit * window_vectors.OVERFETCH))
    if where:
        builder = builder.where(where, prefilter=True)
    hits = builder.select(["chunk_id", "_distance"]).limit(limit * window_vectors.OVERFETCH).to_arrow()
    return best_per_chunk(hits, "_distance", limit)
