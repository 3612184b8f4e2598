"""First-stage search at a million chunks: `python -m eval.bench_scale_1m --data-dir ../shared/eval-data
--sizes 100000,300000,1000000 --json-out FILE`.

For each size, in a process of its own (so `peak_rss_bytes` is that size's):

1. a table of that many chunks: the real rows of the rfc and pydocs indexes of
   the eval cache (built there first if absent, as `eval.run_eval` would),
   then distractors derived from them (`eval.scale_corpus`: perturbed vectors,
   text mixed across chunks), with the product's own full-text indexes;
2. the gold questions of both corpora (rfc 24, pydocs dev 67) through the
   engine's hybrid first stage with exact vector search: `ndcg10_exact`;
3. the ANN index the product builds at this size (`ChunkTable.refresh_ann`),
   five warm-up questions and the row maps they ask for (`row_maps`:
   `DOCENT_ROW_MAPS`, made in the background as a server's are after its
   first question), then every question `--repeat` times per mode: p50/p95 of the fused first
   stage with and without the query embedding, per leg (full text, vector),
   and the gold rows' `ndcg10` with the ANN index.

`--work-dir DIR --reuse` keeps the tables and reuses one whose size matches,
so a change to the search path can be measured without rebuilding. The load
average at start and end is recorded: 2 shared cores make any figure an
upper bound unless it was quiet. Numbers only; nothing here asserts.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from eval.corpora import Corpus, known_corpora, load_gold
from eval.metrics import mean, percentile, row_metrics

log = logging.getLogger("eval.bench_scale_1m")
GOLD_CORPORA = ("rfc", "pydocs")
MODES = ("hybrid", "fts_only", "vector_only")


def _source(corpus: Corpus, settings: Any, embedder: Any) -> tuple[Any, Any]:
    """(chunk rows, window rows) of the corpus's eval-cache index, built there if missing."""
    from eval.run_eval import _index_name
    from rag_system.indexing.builder import build_index
    from rag_system.indexing.store import ChunkTable, open_store, table_exists, table_name

    name = _index_name(corpus, settings)
    db = open_store(settings)
    if not table_exists(db, table_name(name)):
        log.info("building the eval index %s first", name)
        build_index(list(corpus.sources), name, settings, embedder=embedder)
        db = open_store(settings)
    table = ChunkTable.open(db, name)
    assert table.windows is not None, "the scale benchmark measures the default (windowed) layout"
    return table.table.to_arrow(), table.windows.table.to_arrow()


def _table_dirs(folder: Path, index: str) -> list[Path]:
    """The index's own table folders (a prefix glob would also take scale1000000 for scale100000)."""
    from rag_system.indexing.store import table_name
    from rag_system.indexing.window_vectors import VECTORS_SUFFIX
    from rag_system.indexing.windows import WINDOWS_SUFFIX

    return [folder / f"{table_name(index)}{suffix}.lance" for suffix in ("", WINDOWS_SUFFIX, VECTORS_SUFFIX)]


def _disk_bytes(folder: Path, index: str) -> int:
    return sum(f.stat().st_size for d in _table_dirs(folder, index) for f in d.rglob("*") if f.is_file())


def _build(big: Any, sources: list[tuple[Any, Any]], size: int, settings: Any, dim: int,
           noise: float) -> dict[str, float]:
    from eval.scale_corpus import distractor_batches, make_pool
    from rag_system.indexing.window_vectors import window_vector_rows

    def add(chunks: Any, windows: Any) -> None:
        big.table.add(chunks)
        big.windows.table.add(windows)
        big.vectors.table.add(window_vector_rows(chunks, big.vectors.table.schema))

    t0 = time.perf_counter()
    real = 0
    for chunks, windows in sources:
        add(chunks, windows)
        real += chunks.num_rows
    pool = make_pool([c for c, _ in sources], [w for _, w in sources])
    for chunks, windows in distractor_batches(pool, max(0, size - real), dim=dim, noise=noise):
        add(chunks, windows)
    fill_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    big.refresh_fts(stem=settings.fts_stem, remove_stop_words=settings.fts_remove_stop_words,
                    ascii_folding=settings.fts_ascii_folding)
    return {"fill_s": round(fill_s, 1), "fts_s": round(time.perf_counter() - t0, 1), "real_chunks": real}


def _migrate(table: Any, settings: Any, saved: dict[str, Any]) -> None:
    """A table built before the window vector rows gains them (and their ANN index) as a build would
    give them to any index; the time it took goes into `saved["build"]["migrate_s"]`."""
    if not table.lacks_vectors():
        return
    t0 = time.perf_counter()
    table.refresh_fts(stem=settings.fts_stem, remove_stop_words=settings.fts_remove_stop_words,
                      ascii_folding=settings.fts_ascii_folding)
    table.refresh_ann(1)
    saved["build"]["migrate_s"] = round(time.perf_counter() - t0, 1)


def _queries(data_dir: Path, names: list[str]) -> list[tuple[Any, bool]]:
    corpora = known_corpora(data_dir)
    return [(row, corpora[name].case_sensitive) for name in names for row in load_gold(corpora[name].gold)]


def _pass(engine: Any, index: str, queries: list[tuple[Any, bool]], mode: str) -> tuple[list[dict], float]:
    """One pass of every question: (timings per question, mean nDCG@10)."""
    options = engine.options(mode=mode, rerank=False)
    timings, scores = [], []
    forget = getattr(engine.embedder, "forget_recent", lambda: None)
    for row, case_sensitive in queries:
        forget()  # every question is timed cold: no remembered query vector
        result = engine.retrieve(index, row.query, options)
        timings.append(result.timings_ms)
        scores.append(row_metrics([c.text for c in result.candidates], row, case_sensitive)["ndcg@10"])
    return timings, mean(scores)


def _p(values: list[float]) -> dict[str, float]:
    return {"p50": round(percentile(values, 0.5), 2), "p95": round(percentile(values, 0.95), 2)}


def _summarise(timings: list[dict]) -> dict[str, Any]:
    total = [t["first_stage_ms"] for t in timings]
    search = [t["first_stage_ms"] - t.get("embed_ms", 0.0) for t in timings]
    out = {"with_embedding": _p(total), "search_only": _p(search)}
    for leg in ("embed_ms", "fts_ms", "vector_ms", "fuse_ms"):
        if any(leg in t for t in timings):
            out[leg.replace("_ms", "_p50_ms")] = round(percentile([t.get(leg, 0.0) for t in timings], 0.5), 2)
    return out


def one_size(args: argparse.Namespace, size: int) -> dict[str, Any]:
    from rag_system.config import load_settings
    from rag_system.embedding.minilm import MiniLMEmbedder
    from rag_system.indexing.store import ChunkTable, open_store, table_exists, table_name
    from rag_system.indexing.window_vectors import VECTORS_SUFFIX
    from rag_system.indexing.windows import WINDOWS_SUFFIX
    from rag_system.retrieval.engine import RetrievalEngine

    out: dict[str, Any] = {"chunks": size, "load_average_start": [round(x, 2) for x in os.getloadavg()]}
    base = load_settings()
    embedder = MiniLMEmbedder.from_settings(base)
    cache = base.with_overrides(data_dir=str(args.cache_dir))
    settings = base.with_overrides(data_dir=str(args.work_dir))
    index = f"scale{size}"
    db = open_store(settings)
    exact_file = Path(args.work_dir) / f"{index}.exact.json"
    names = args.gold.split(",")
    queries = _queries(args.data_dir, names)
    reuse = args.reuse and table_exists(db, table_name(index)) and exact_file.exists()
    if reuse:
        log.info("reusing %s", index)
        saved = json.loads(exact_file.read_text())
        _migrate(ChunkTable.open(db, index), base, saved)
        exact_file.write_text(json.dumps(saved))
    else:
        sources = [_source(known_corpora(args.data_dir)[name], cache, embedder) for name in names]
        for name in (table_name(index), table_name(index) + WINDOWS_SUFFIX, table_name(index) + VECTORS_SUFFIX):
            if table_exists(db, name):
                db.drop_table(name)
        big = ChunkTable.open_or_create(db, index, embedder.identity, base.chunk_window_tokens)
        saved = {"build": _build(big, sources, size, base, embedder.identity.dimension, args.noise)}
        del sources
        engine = RetrievalEngine(settings, embedder)
        timings, ndcg = _pass(engine, index, queries, "hybrid")
        saved.update(ndcg10_exact=round(ndcg, 4), exact=_summarise(timings))
        t1 = time.perf_counter()
        kind = big.refresh_ann(1)
        build = saved["build"]
        build.update(ann_index=kind, ann_s=round(time.perf_counter() - t1, 1))
        build["build_s"] = round(build["fill_s"] + build["fts_s"] + build["ann_s"], 1)
        exact_file.write_text(json.dumps(saved))
    table = ChunkTable.open(open_store(settings), index)
    out.update(chunks=table.count(), windows=table.windows.table.count_rows(),
               build_s=saved["build"]["build_s"], build=saved["build"],
               disk_bytes=_disk_bytes(Path(args.work_dir) / "lancedb", index),
               ndcg10_exact=saved["ndcg10_exact"], exact=saved["exact"])
    engine = RetrievalEngine(settings, embedder)
    for row, _ in queries[:5]:  # open the tables, warm the caches
        engine.retrieve(index, row.query, engine.options(rerank=False))
    engine.settle(index)  # the row maps a server makes after its first question (Documentation/indexing.md)
    modes: dict[str, Any] = {}
    for mode in MODES:
        timings: list[dict] = []
        for rep in range(args.repeat):
            pass_timings, ndcg = _pass(engine, index, queries, mode)
            timings += pass_timings
            if rep == 0:
                modes.setdefault(mode, {})["ndcg10"] = round(ndcg, 4)
        modes[mode].update(_summarise(timings))
    hybrid = modes["hybrid"]
    out.update(ndcg10=hybrid["ndcg10"], hybrid_p50_ms=hybrid["with_embedding"]["p50"],
               hybrid_p95_ms=hybrid["with_embedding"]["p95"], search_p50_ms=hybrid["search_only"]["p50"],
               search_p95_ms=hybrid["search_only"]["p95"], fts_p50_ms=modes["fts_only"]["search_only"]["p50"],
               vector_p50_ms=modes["vector_only"]["search_only"]["p50"],
               embed_p50_ms=hybrid.get("embed_p50_ms"), modes=modes, questions=len(queries),
               row_maps=settings.row_maps,
               peak_rss_bytes=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
               load_average_end=[round(x, 2) for x in os.getloadavg()])
    return out


def growth(results: list[dict[str, Any]]) -> dict[str, float]:
    """Log-log slope from the smallest to the largest size: ~0 flat, ~0.5 sub-linear, ~1 linear."""
    if len(results) < 2:
        return {}
    a, b = results[0], results[-1]
    ratio = math.log(b["chunks"] / a["chunks"])
    return {key: round(math.log(max(b[key], 1e-3) / max(a[key], 1e-3)) / ratio, 2)
            for key in ("search_p50_ms", "fts_p50_ms", "vector_p50_ms", "build_s", "disk_bytes")}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m eval.bench_scale_1m", description=__doc__.split("\n")[0])
    p.add_argument("--data-dir", type=Path, default=Path("../shared/eval-data"))
    p.add_argument("--cache-dir", type=Path, default=Path("eval/.cache"), help="eval index cache (rfc, pydocs)")
    p.add_argument("--sizes", default="100000,300000,1000000")
    p.add_argument("--work-dir", type=Path, help="where the tables go (default: a temporary folder)")
    p.add_argument("--reuse", action="store_true", help="reuse a table of the same size in --work-dir")
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--gold", default=",".join(GOLD_CORPORA), help="corpora whose rows and questions go in")
    p.add_argument("--noise", type=float, default=0.35, help="norm of the noise added to distractor vectors")
    p.add_argument("--json-out", type=Path)
    p.add_argument("--one-size", type=int, help=argparse.SUPPRESS)
    p.add_argument("-v", "--verbose", action="store_true")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if args.one_size:
        result = one_size(args, args.one_size)
        args.json_out.write_text(json.dumps(result))
        return 0
    results = []
    with tempfile.TemporaryDirectory(prefix="docent-scale-") as tmp:
        work = args.work_dir or Path(tmp)
        for size in (int(s) for s in args.sizes.split(",")):
            part = Path(tmp) / f"{size}.json"
            cmd = [sys.executable, "-m", "eval.bench_scale_1m", "--one-size", str(size), "--json-out", str(part),
                   "--data-dir", str(args.data_dir), "--cache-dir", str(args.cache_dir), "--work-dir", str(work),
                   "--repeat", str(args.repeat), "--gold", args.gold, "--noise", str(args.noise)] + \
                  (["--reuse"] if args.reuse else []) + (["-v"] if args.verbose else [])
            subprocess.run(cmd, check=True)
            results.append(json.loads(part.read_text()))
            sys.stderr.write(json.dumps({k: v for k, v in results[-1].items() if not isinstance(v, dict)}) + "\n")
            if not args.work_dir:  # a temporary folder: free the disk before the next size
                for table in _table_dirs(work / "lancedb", f"scale{size}"):
                    subprocess.run(["rm", "-rf", str(table)], check=True)
    report = {"sizes": results, "growth_exponent": growth(results)}
    text = json.dumps(report, indent=2)
    if args.json_out:
        args.json_out.write_text(text + "\n")
    sys.stdout.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
