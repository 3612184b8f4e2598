"""First-stage latency at scale: `python -m eval.bench_retrieval --data-dir ../shared/eval-data`.

Takes the rfc index (from the eval cache when `eval.run_eval` already built it
with the same settings, else built in a temporary folder), then replicates its
rows (new chunk ids, the same text and vectors; with windows, the window rows
too) into a table of `--chunks` rows (default 100,000), and times first-stage
retrieval for the rfc gold queries on both tables: exact vector search, and
with an ANN index on the large one. The layout is the settings' own (windows
by default: two full-text rankings over the window table and a multivector
MaxSim search); `--layout chunk` measures one vector per chunk. Query
embedding is timed separately, because it costs the same at any size.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from eval.corpora import known_corpora, load_gold
from eval.metrics import percentile

log = logging.getLogger("eval.bench_retrieval")


def _copies(rows: Any, target: int) -> list[Any]:
    """Slices of `rows` with new chunk ids ("r<copy>-<i>") adding up to `target` rows."""
    import pyarrow as pa

    n = rows.num_rows
    column = rows.schema.get_field_index("chunk_id")
    out, total, copy = [], 0, 0
    while total < target:
        take = min(n, target - total)
        ids = pa.array([f"r{copy:05d}-{i}" for i in range(take)])
        out.append(rows.slice(0, take).set_column(column, "chunk_id", ids))
        total += take
        copy += 1
    return out


def replicate(big: Any, chunks: Any, windows: Any | None, target: int) -> None:
    """Fill `big` (a ChunkTable) with `target` chunks copied from `chunks`, windows following their chunk."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if windows is not None:
        # Window rows grouped by position of their chunk in `chunks`, so copy c
        # of chunk i gets the windows of chunk i under the id "r<c>-<i>".
        position = {cid: i for i, cid in enumerate(chunks.column("chunk_id").to_pylist())}
        pos = pa.array([position.get(c, -1) for c in windows.column("chunk_id").to_pylist()], pa.int64())
        windows = windows.filter(pc.greater_equal(pos, 0))
        pos = pos.filter(pc.greater_equal(pos, 0))
    for copy, batch in enumerate(_copies(chunks, target)):
        big.table.add(batch)
        if big.vectors is not None:  # the window vectors as rows, as the product writes them
            from rag_system.indexing.window_vectors import window_vector_rows

            big.vectors.table.add(window_vector_rows(batch, big.vectors.table.schema))
        if windows is not None:
            keep = pc.less(pos, batch.num_rows)
            part = windows.filter(keep)
            ids = pa.array([f"r{copy:05d}-{i}" for i in pos.filter(keep).to_pylist()])
            big.windows.table.add(part.set_column(part.schema.get_field_index("chunk_id"), "chunk_id", ids))


def _time_queries(engine: Any, index: str, queries: list[str], mode: str, repeat: int) -> dict[str, float]:
    options = engine.options(mode=mode, k=20, rerank=False)  # the first stage alone
    totals: list[float] = []
    searches: list[float] = []
    embeds: list[float] = []
    forget = getattr(engine.embedder, "forget_recent", lambda: None)
    for _ in range(repeat):
        for q in queries:
            forget()  # every question is timed cold: no remembered query vector
            result = engine.retrieve(index, q, options)
            t = result.timings_ms
            totals.append(t["first_stage_ms"])
            embeds.append(t.get("embed_ms", 0.0))
            searches.append(max(t.get("fts_ms", 0.0), t.get("vector_ms", 0.0)))
    return {"p50_ms": round(percentile(totals, 0.5), 2), "p95_ms": round(percentile(totals, 0.95), 2),
            "embed_p50_ms": round(percentile(embeds, 0.5), 2),
            "search_p50_ms": round(percentile(searches, 0.5), 2)}


def _source_index(args: argparse.Namespace, settings: Any, embedder: Any, tmp: str) -> tuple[Any, str]:
    """(settings whose store holds the rfc index, its name): the eval cache's index if present."""
    from eval.run_eval import _index_name
    from rag_system.indexing.builder import build_index
    from rag_system.indexing.store import open_store, table_exists, table_name

    corpus = known_corpora(args.data_dir)["rfc"]
    if args.cache_dir is not None:
        cached = settings.with_overrides(data_dir=str(args.cache_dir))
        name = _index_name(corpus, cached)
        if table_exists(open_store(cached), table_name(name)):
            log.info("using the cached eval index %s", name)
            return cached, name
    built = settings.with_overrides(data_dir=tmp)
    build_index(list(corpus.sources), "rfc", built, embedder=embedder)
    return built, "rfc"


def _ann_index(big: Any) -> tuple[str, float]:
    """Build an ANN index on the column the vector leg searches; (index type, seconds)."""
    t0 = time.perf_counter()
    column = big.vector_column
    # LanceDB indexes multivector columns with IVF_PQ (HNSW variants are single-vector only).
    kind = "IVF_PQ" if column != "vector" else "IVF_HNSW_SQ"
    big.table.create_index(vector_column_name=column, metric="cosine", index_type=kind)
    return kind, time.perf_counter() - t0


def run(args: argparse.Namespace) -> dict[str, Any]:
    from rag_system.config import load_settings
    from rag_system.embedding.minilm import MiniLMEmbedder
    from rag_system.indexing.store import ChunkTable, open_store
    from rag_system.retrieval.engine import RetrievalEngine

    queries = [row.query for row in load_gold(known_corpora(args.data_dir)["rfc"].gold)]
    overrides = {"chunk_window_tokens": 0} if args.layout == "chunk" else {}
    # Latency on a shared machine means little without the load it ran under.
    out: dict[str, Any] = {"layout": args.layout, "load_average_start": [round(x, 2) for x in os.getloadavg()]}
    with tempfile.TemporaryDirectory(prefix="docent-bench-") as tmp:
        base = load_settings().with_overrides(**overrides)
        embedder = MiniLMEmbedder.from_settings(base)
        source_settings, source = _source_index(args, base, embedder, tmp)
        engine = RetrievalEngine(source_settings, embedder)
        engine.retrieve(source, "warm up", engine.options(rerank=False))
        small = engine.table(source)
        window_tokens = small.window_tokens()
        out["rfc"] = {"chunks": small.count(), "window_tokens": window_tokens,
                      "windows": small.windows.table.count_rows() if small.windows is not None else 0,
                      "hybrid": _time_queries(engine, source, queries, "hybrid", args.repeat)}

        big_settings = base.with_overrides(data_dir=tmp)
        db = open_store(big_settings)
        big = ChunkTable.open_or_create(db, "big", embedder.identity, window_tokens)
        t0 = time.perf_counter()
        replicate(big, small.table.to_arrow(),
                  small.windows.table.to_arrow() if small.windows is not None else None, args.chunks)
        big.refresh_fts(stem=base.fts_stem, remove_stop_words=base.fts_remove_stop_words,
                        ascii_folding=base.fts_ascii_folding)
        fill_s = time.perf_counter() - t0
        engine = RetrievalEngine(big_settings, embedder)
        engine.retrieve("big", "warm up", engine.options(rerank=False))
        flat = {mode: _time_queries(engine, "big", queries, mode, args.repeat)
                for mode in ("hybrid", "vector_only", "fts_only")}
        out["big"] = {"chunks": big.count(),
                      "windows": big.windows.table.count_rows() if big.windows is not None else 0,
                      "fill_and_fts_seconds": round(fill_s, 1), "exact": flat}
        if not args.skip_ann:
            kind, build_s = _ann_index(big)
            engine.forget("big")
            engine.retrieve("big", "warm up", engine.options(rerank=False))
            out["big"]["ann"] = {"index_type": kind, "build_seconds": round(build_s, 1),
                                 **{mode: _time_queries(engine, "big", queries, mode, args.repeat)
                                    for mode in ("hybrid", "vector_only")}}
    out["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m eval.bench_retrieval", description=__doc__.split("\n")[0])
    p.add_argument("--data-dir", type=Path, default=Path("../shared/eval-data"))
    p.add_argument("--cache-dir", type=Path, default=Path("eval/.cache"),
                   help="eval index cache to take the rfc index from (built in a temporary folder if absent)")
    p.add_argument("--layout", choices=("windows", "chunk"), default="windows",
                   help="windows: the default settings; chunk: one vector per chunk (CHUNK_WINDOW_TOKENS=0)")
    p.add_argument("--chunks", type=int, default=100_000)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--skip-ann", action="store_true", help="time exact search only")
    p.add_argument("-v", "--verbose", action="store_true")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, stream=sys.stderr,
                        format="%(levelname)s %(name)s: %(message)s")
    sys.stdout.write(json.dumps(run(args), indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
