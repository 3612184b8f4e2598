"""The first stage's LanceDB searches as coroutines, run together in one hand-over to LanceDB's event loop.

Why: LanceDB's synchronous API passes every call to its background event
loop thread and waits for the answer. A vector leg through it was six such
round trips (three reads of the table schema by the query builder, the
query, its batches), each a wake-up of the loop thread and a wait; with the
four legs of a question on four pool threads, the round trips queued behind
each other on 2 cores. The same queries on the tables' asynchronous handles,
gathered in one coroutine, make one round trip per question, and LanceDB's
own runtime runs them side by side: at 100,000 chunks the four legs took
10.5 ms p50 this way against 19.7 ms for legs, fusion and rows through the
pool, and reading the winners' rows 3.9 against 4.8 ms (load 3.7, the same
results; Documentation/evaluation.md, "A million chunks", fourth round).

These are the only definitions of the legs' queries: the engine and
`eval.leg_analysis` both run them (tests/integration/test_legs.py holds them
to the synchronous references in `testkit.leg_references`). Each keeps each
chunk's first (best) window with Arrow compute kernels, not a Python loop
over the hits. On a windowed table a leg asks
only for its hits' scores and row addresses, and learns their chunks from
the index's row maps (rag_system/retrieval/row_maps.py) where it has them.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from rag_system.indexing import window_vectors, windows
from rag_system.indexing.sql import sql_in
from rag_system.indexing.store import ChunkTable
from rag_system.retrieval.lance_loop import submit
from rag_system.retrieval.row_maps import RowMaps, identify


@dataclass(frozen=True)
class Ranking:
    """One leg's chunks, best first, with the score fusion reads (BM25, or cosine similarity), and how
    long its query took (`ms`; the first stage reports it)."""

    ids: list[str]
    scores: list[float]
    ms: float = field(default=0.0, compare=False)  # a timing, not part of what was ranked


def handle(table: Any) -> Any:
    """The asynchronous table inside a synchronous LanceDB table (lancedb 0.40: `LanceTable._table`).

    Queried through it, a search reads the same dataset version, caches and
    consistency checks as the synchronous table that holds it.
    """
    inner = getattr(table, "_table", None)
    if inner is None or not hasattr(inner, "query"):
        raise RuntimeError(f"{type(table).__name__} has no asynchronous handle; LanceDB's API changed")
    return inner


def start(coroutines: Sequence[Awaitable[Any]]) -> Future[list[Any]]:
    """`coroutines` started together on LanceDB's loop; the future's list holds a failed one's exception."""
    if not coroutines:  # a mode without this kind of leg: no hand-over at all
        done: Future[list[Any]] = Future()
        done.set_result([])
        return done

    async def together() -> list[Any]:
        return await asyncio.gather(*coroutines, return_exceptions=True)

    return submit(together())


def run(coroutines: Sequence[Awaitable[Any]]) -> list[Any]:
    """Results of `coroutines`, run together on LanceDB's loop; a failed one's place holds its exception."""
    return start(coroutines).result()


def best_first(hits: pa.Table, column: str, limit: int) -> tuple[list[str], pa.Array]:
    """Each chunk's first hit (hits come best first), at most `limit` chunks, in order, and their `column`."""
    ids = hits.column("chunk_id")
    if len(ids) == 0:
        return [], pa.array([], pa.float64())
    first = pc.index_in(pc.unique(ids), value_set=ids).slice(0, limit)
    values = pc.take(hits.column(column), first).cast(pa.float64()).fill_null(0.0)
    return pc.take(ids, first).to_pylist(), values


async def fts_leg(table: ChunkTable, terms: str, where: str | None, limit: int, column: str,
                  maps: RowMaps | None = None) -> Ranking:
    """Chunks by BM25: on a windowed table by their best window in `column`, else the chunk table's text.

    Built inside the coroutine, so that any failure, building included, is
    this leg's (the first stage then degrades to vector search): nothing here
    is a synchronous LanceDB call, which on LanceDB's own loop would wait for
    that loop forever.
    """
    if table.windows is not None:
        source = handle(table.windows.table)
        query = source.query().nearest_to_text(windows.match_query(terms, column))
        wanted = limit * windows.OVERFETCH
    else:
        source, maps = handle(table.table), None  # an older layout: chunk rows, no maps
        query = source.query().nearest_to_text(windows.match_query(terms, "text"))
        wanted = limit
    if where:
        query = query.where(where)
    return await _ranked(query.limit(wanted), source, maps, "_score", limit, lambda scores: scores)


def vector_leg(table: ChunkTable, vector: Any, where: str | None, limit: int, refine: int,
               maps: RowMaps | None = None) -> Awaitable[Ranking]:
    """Chunks by cosine similarity of their best window (window vector rows, or the multivector column).

    `refine` re-scores an older table's multivector IVF_PQ hits with the stored
    vectors. The query is built here, in the caller's thread, and only run as
    a coroutine: the index kind, the beam and the column may need synchronous
    LanceDB look-ups, which on LanceDB's own loop would wait for it forever.
    """
    vectors = table.vectors
    if vectors is not None:
        source = handle(vectors.table)
        query = source.query().nearest_to(vector).column("vector").distance_type("cosine")
        wanted = limit * window_vectors.OVERFETCH
        if vectors.ann_kind() == "IvfPq":
            query = query.nprobes(window_vectors.PQ_NPROBES).refine_factor(window_vectors.PQ_REFINE)
        else:  # HNSW (the beam), or exact search, which ignores it
            query = query.ef(vectors.search_beam(wanted))
    else:
        source, maps = handle(table.table), None  # an older layout: chunk rows, no maps
        query = (source.query().nearest_to(vector).column(table.vector_column)
                 .distance_type("cosine").refine_factor(refine))
        wanted = limit
    if where:
        query = query.where(where)
    return _ranked(query.limit(wanted), source, maps, "_distance", limit,
                   lambda distances: pc.subtract(1.0, distances))


async def _ranked(query: Any, source: Any, maps: RowMaps | None, column: str, limit: int, score: Any) -> Ranking:
    """`query`'s chunks, best first: their ids from `source`'s row map when there is one, else read with the hits.

    Without a map yet one is asked for (made in the background); the
    question does not wait for it.
    """
    t0 = time.perf_counter()
    runs = maps.current(source.name) if maps is not None else None
    if maps is None or runs is None:
        if maps is not None:
            maps.request(source.name, source)
        hits = await query.select(["chunk_id", column]).to_arrow()
    else:
        hits = await identify(maps, source, runs, await query.select([column]).with_row_id().to_arrow())
    ids, values = best_first(hits, column, limit)
    return Ranking(ids, score(values).to_pylist(), (time.perf_counter() - t0) * 1000)


def rows_by_id(table: ChunkTable, chunk_ids: Sequence[str], columns: Sequence[str]) -> list[dict[str, Any]]:
    """`ChunkTable.rows_by_id` in one round trip: these chunks' rows in the order given (missing ids skipped)."""
    if not chunk_ids:
        return []

    async def read() -> pa.Table:
        query = handle(table.table).query().where(sql_in("chunk_id", chunk_ids))
        return await query.select(list(columns)).limit(len(chunk_ids)).to_arrow()

    [found] = run([read()])
    if isinstance(found, BaseException):
        raise found
    by_id = {row["chunk_id"]: row for row in found.to_pylist()}
    return [by_id[c] for c in chunk_ids if c in by_id]
