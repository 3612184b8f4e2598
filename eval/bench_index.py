"""Indexing throughput: `python -m eval.bench_index --data-dir ../shared/eval-data`.

Builds a fresh index of the localGPT corpora (or `--docs FOLDER`) through the
whole pipeline, then embeds exactly the same chunk texts with the embedder
alone. The embedder is the physical limit on CPU, so the figure that matters
is the ratio of the two rates (Documentation/evaluation.md asks for >= 90%). With windows
(`CHUNK_WINDOW_TOKENS`) the pipeline embeds the window texts instead of the
chunk texts, so the window texts are timed alone too: `window_ratio` is the
pipeline's own efficiency, `window_cost` what the windows add to embedding. The
window texts alone are timed at the configured batch and at the pipeline's
smaller one (`PROGRESS_BATCH`), and the faster of the two is the limit.
`--embedder e5-small` times the multilingual embedder instead of MiniLM; run
one process per embedder, so that `peak_rss_mb` is that embedder's alone.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def _sources(args: argparse.Namespace) -> list[Path]:
    if args.docs:
        return [args.docs]
    corpora = args.data_dir / "localgpt" / "corpora"
    return [corpora / "rfc", corpora / "docs", corpora / "acquisition",
            corpora / "atlas7_service_manual.pdf", corpora / "northwind_leave_policy.pdf"]


def run(args: argparse.Namespace) -> dict[str, Any]:
    from rag_system.config import load_settings
    from rag_system.indexing.builder import PROGRESS_BATCH, build_index
    from rag_system.indexing.lazy_embedder import build_embedder
    from rag_system.indexing.store import ChunkTable, open_store

    sources = _sources(args)
    missing = [str(s) for s in sources if not s.exists()]
    if missing:
        raise SystemExit(f"missing data: {', '.join(missing)}")
    with tempfile.TemporaryDirectory(prefix="docent-bench-") as tmp:
        settings = load_settings().with_overrides(data_dir=tmp, embedder=args.embedder,
                                                  **dict(kv.split("=", 1) for kv in args.set))
        embedder = build_embedder(settings)
        embedder.embed(["warm up the model once"])
        t0 = time.perf_counter()
        summary = build_index(sources, "bench", settings, embedder=embedder, embedder_name=args.embedder)
        pipeline_s = time.perf_counter() - t0
        table = ChunkTable.open(open_store(settings), "bench")
        texts = table.table.to_arrow().column("text").to_pylist()
        t1 = time.perf_counter()
        embedder.embed(texts)
        embed_s = time.perf_counter() - t1
        windows = table.windows.table.to_arrow().column("text").to_pylist() if table.windows else []
        t2 = time.perf_counter()
        embedder.embed(windows)
        windows_s = time.perf_counter() - t2
        # The pipeline embeds in batches of PROGRESS_BATCH; the embedder's rate is its best batching.
        t3 = time.perf_counter()
        embedder.embed(windows, batch_size=PROGRESS_BATCH)
        windows_small_s = time.perf_counter() - t3
        fastest_s = min(windows_s, windows_small_s)
    chunks = len(texts)
    pipeline_rate = chunks / pipeline_s
    embed_rate = chunks / embed_s
    return {
        "sources": [str(s) for s in sources], "embedder": args.embedder,
        "files": summary.added, "failed": summary.failed, "pages": summary.pages, "chunks": chunks,
        "pipeline_seconds": round(pipeline_s, 2), "embedder_only_seconds": round(embed_s, 2),
        "pipeline_pages_per_s": round(summary.pages / pipeline_s, 2),
        "pipeline_chunks_per_s": round(pipeline_rate, 2),
        "embedder_chunks_per_s": round(embed_rate, 2),
        "ratio": round(pipeline_rate / embed_rate, 3),
        "stage_seconds": {k: round(v, 2) for k, v in summary.timings.items()},
        "chunk_tokens": settings.chunk_tokens,
        "window_tokens": settings.chunk_window_tokens if windows else 0, "windows": len(windows),
        **({"embedder_windows_seconds": round(windows_s, 2),
            f"embedder_windows_seconds_batch_{PROGRESS_BATCH}": round(windows_small_s, 2),
            "window_ratio": round(fastest_s / pipeline_s, 3),
            "window_cost": round(fastest_s / embed_s, 3)} if windows else {}),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m eval.bench_index", description=__doc__.split("\n")[0])
    p.add_argument("--data-dir", type=Path, default=Path("../shared/eval-data"))
    p.add_argument("--docs", type=Path, help="benchmark your own folder instead")
    from rag_system.indexing.embedders import NAMES

    p.add_argument("--embedder", default="minilm", choices=NAMES,
                   help="which packaged embedder indexes and is timed alone (default: minilm)")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="override a setting")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    result = run(args)
    if args.json:
        sys.stdout.write(json.dumps(result, indent=2) + "\n")
        return 0
    rows = [
        ("embedder", result["embedder"]), ("files indexed", result["files"]), ("files failed", len(result["failed"])),
        ("pages", result["pages"]), ("chunks", result["chunks"]),
        ("pipeline seconds", result["pipeline_seconds"]),
        ("pipeline pages/s", result["pipeline_pages_per_s"]),
        ("pipeline chunks/s", result["pipeline_chunks_per_s"]),
        ("embedder-only chunks/s", result["embedder_chunks_per_s"]),
        ("pipeline / embedder", result["ratio"]),
        ("windows embedded", result["windows"]),
        ("pipeline / windows", result.get("window_ratio", "-")),
        ("windows / chunks time", result.get("window_cost", "-")),
        ("peak RSS MB", result["peak_rss_mb"]),
    ]
    for name, value in rows:
        sys.stdout.write(f"{name:<24} {value}\n")
    sys.stdout.write(f"stage seconds: {json.dumps(result['stage_seconds'])}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
