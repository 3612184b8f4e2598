"""First-stage latency at scale: `python -m eval.bench_retrieval --data-dir ../shared/eval-data`.

Indexes the rfc corpus, then replicates its rows (new chunk ids, the same
text and vectors) into a table of `--chunks` rows (default 100,000), and
times hybrid first-stage retrieval for the rfc gold queries on both tables:
exact vector search, and with an ANN index (IVF_HNSW_SQ) on the large one.
Query embedding is timed separately, because it costs the same at any size.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from eval.corpora import known_corpora, load_gold
from eval.metrics import percentile


def _replicate(table: Any, source_rows: Any, target: int) -> None:
    import pyarrow as pa

    n = source_rows.num_rows
    copies = 0
    while table.count_rows() < target:
        ids = pa.array([f"r{copies:05d}-{i}" for i in range(n)])
        batch = source_rows.set_column(source_rows.schema.get_field_index("chunk_id"), "chunk_id", ids)
        table.add(batch.slice(0, min(n, target - table.count_rows())))
        copies += 1


def _time_queries(engine: Any, index: str, queries: list[str], mode: str, repeat: int) -> dict[str, float]:
    options = engine.options(mode=mode, k=20)
    totals: list[float] = []
    searches: list[float] = []
    embeds: list[float] = []
    for _ in range(repeat):
        for q in queries:
            result = engine.retrieve(index, q, options)
            t = result.timings_ms
            totals.append(t["first_stage_ms"])
            embeds.append(t.get("embed_ms", 0.0))
            searches.append(max(t.get("fts_ms", 0.0), t.get("vector_ms", 0.0)))
    return {"p50_ms": round(percentile(totals, 0.5), 2), "p95_ms": round(percentile(totals, 0.95), 2),
            "embed_p50_ms": round(percentile(embeds, 0.5), 2),
            "search_p50_ms": round(percentile(searches, 0.5), 2)}


def run(args: argparse.Namespace) -> dict[str, Any]:
    from rag_system.config import load_settings
    from rag_system.indexing.builder import build_index
    from rag_system.indexing.embedder import Embedder
    from rag_system.indexing.store import ChunkTable, connect
    from rag_system.retrieval.engine import RetrievalEngine

    corpus = known_corpora(args.data_dir)["rfc"]
    queries = [row.query for row in load_gold(corpus.gold)]
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="docent-bench-") as tmp:
        settings = load_settings().with_overrides(data_dir=tmp)
        embedder = Embedder.from_settings(settings)
        build_index(list(corpus.sources), "rfc", settings, embedder=embedder)
        engine = RetrievalEngine(settings, embedder)
        engine.retrieve("rfc", "warm up", engine.options())
        small = engine.table("rfc")
        out["rfc"] = {"chunks": small.count(), "hybrid": _time_queries(engine, "rfc", queries, "hybrid", args.repeat)}

        db = connect(settings.resolved_lancedb_uri)
        rows = small.table.to_arrow()
        big = ChunkTable.open_or_create(db, "big", embedder.identity)
        _replicate(big.table, rows, args.chunks)
        big.refresh_fts(stem=settings.fts_stem, remove_stop_words=settings.fts_remove_stop_words,
                        ascii_folding=settings.fts_ascii_folding)
        engine.forget("big")
        engine.retrieve("big", "warm up", engine.options())
        flat = {mode: _time_queries(engine, "big", queries, mode, args.repeat)
                for mode in ("hybrid", "vector_only", "fts_only")}
        t0 = time.perf_counter()
        big.table.create_index(vector_column_name="vector", metric="cosine", index_type="IVF_HNSW_SQ")
        build_s = time.perf_counter() - t0
        engine.forget("big")
        engine.retrieve("big", "warm up", engine.options())
        ann = {mode: _time_queries(engine, "big", queries, mode, args.repeat) for mode in ("hybrid", "vector_only")}
        out["big"] = {"chunks": big.count(), "exact": flat, "ann_ivf_hnsw_sq": ann,
                      "ann_build_seconds": round(build_s, 1)}
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m eval.bench_retrieval", description=__doc__.split("\n")[0])
    p.add_argument("--data-dir", type=Path, default=Path("../shared/eval-data"))
    p.add_argument("--chunks", type=int, default=100_000)
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args(argv)
    sys.stdout.write(json.dumps(run(args), indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
