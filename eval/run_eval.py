"""Retrieval evaluation: `python -m eval.run_eval --data-dir ../shared/eval-data --corpus rfc`.

Indexes each corpus once (cached under `--cache-dir`, keyed by the settings
that change chunks; unchanged files are skipped by the incremental build),
runs every gold query through the real retrieval engine and reports
recall@5/10/20, MRR@10 and nDCG@10 (first stage and final), latency
percentiles and per-dimension slices. Works the same on your own folder:
`--docs FOLDER --gold FILE.jsonl`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import sys
from typing import Any

from eval.corpora import (
    ALL,
    DEBREF,
    Corpus,
    add_corpus_arguments,
    check_corpus_arguments,
    custom_corpus,
    known_corpora,
    load_gold,
)
from eval.report import format_quality_table, format_table, summarise

MODES = ("hybrid", "vector_only", "fts_only")
log = logging.getLogger("eval.run_eval")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m eval.run_eval", description=__doc__.split("\n")[0])
    add_corpus_arguments(p, (*ALL, "all", *DEBREF, "debref"))
    p.add_argument("--embedders", default=None, metavar="A,B",
                   help="run every corpus with each of these embedders (e.g. minilm,e5-small), side by side")
    p.add_argument("--mode", choices=MODES, default=None)
    p.add_argument("--compare-modes", action="store_true", help="run hybrid, vector_only and fts_only")
    p.add_argument("--rerank", action="store_true", help="enable the configured reranker")
    p.add_argument("--k", type=int, default=20)
    args = p.parse_args(argv)
    check_corpus_arguments(p, args)
    return args


def _overrides(pairs: list[str]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep:
            raise SystemExit(f"--set expects NAME=VALUE, got {pair!r}")
        out[name.strip()] = value.strip()
    return out


def _index_name(corpus: Corpus, settings: Any) -> str:
    """Cache key: corpus plus every setting that changes what is stored.

    The full-text settings are part of it too: the build rebuilds the FTS index
    in place when they change, which would otherwise flip a cached index that
    another run (or another checkout sharing the cache) is using. Sources are
    resolved, so `--data-dir ../shared/eval-data` and its absolute spelling
    share one cached index.
    """
    from rag_system.embedding.registry import default_name

    key = json.dumps([corpus.index_as or corpus.name, [str(s.resolve()) for s in corpus.sources],
                      settings.chunk_tokens,
                      settings.chunk_overlap_sentences, settings.chunk_context, settings.embedding_model,
                      settings.embedding_max_tokens, settings.ocr_engine, settings.chunk_window_tokens,
                      settings.fts_stem, settings.fts_remove_stop_words, settings.fts_ascii_folding]
                     + (["pack_code"] if settings.chunk_pack_code else [])
                     + (["window_at_blocks"] if settings.chunk_window_at_blocks else [])
                     + (["topic_breaks"] if settings.chunk_topic_breaks else [])
                     + ([f"window_at_topics={settings.chunk_window_at_topics:g}v"]
                        if settings.chunk_window_at_topics else [])
                     + ([f"embedder={name}"] if (name := default_name(settings)) != "minilm" else [])
                     + ([f"fts_language={settings.fts_language}"] if settings.fts_language != "auto" else []),
                     sort_keys=True)
    slug = "".join(ch if ch.isalnum() else "_" for ch in (corpus.index_as or corpus.name))
    return f"eval_{slug}_{hashlib.sha256(key.encode()).hexdigest()[:10]}"


def run_corpus(corpus: Corpus, settings: Any, embedder: Any, args: argparse.Namespace) -> list[dict[str, Any]]:
    from rag_system.indexing.builder import build_index
    from rag_system.retrieval.engine import RetrievalEngine

    index = _index_name(corpus, settings)
    summary = build_index(list(corpus.sources), index, settings, embedder=embedder)
    log.info("index %s: %s", index, json.dumps(summary.to_json()["files"]))
    rows = load_gold(corpus.gold)
    if args.limit:
        rows = rows[: args.limit]
    engine = RetrievalEngine(settings, embedder)
    modes = MODES if args.compare_modes else (args.mode or settings.retrieval_mode,)
    runs = []
    for mode in modes:
        options = engine.options(mode=mode, k=args.k, rerank=args.rerank or None)
        results = []
        for row in rows:
            result = engine.retrieve(index, row.query, options)
            results.append((row, result))
        arm = {"mode": mode, "rerank": bool(args.rerank), "k": args.k,
               "fusion": settings.fusion, "fts_weight": settings.fts_weight,
               "vector_weight": settings.vector_weight,
               "chunk_tokens": settings.chunk_tokens, "chunk_context": settings.chunk_context,
               "chunk_window_tokens": settings.chunk_window_tokens, "fts_exact": settings.fts_exact,
               "query_focus": settings.query_focus, "chunk_pack_code": settings.chunk_pack_code,
               "chunk_window_at_blocks": settings.chunk_window_at_blocks,
               "chunk_topic_breaks": settings.chunk_topic_breaks, "fts_stem": settings.fts_stem,
               "fts_remove_stop_words": settings.fts_remove_stop_words,
               "embedding_model": embedder.identity.model_id, "embedder": embedder.name}
        run = summarise(corpus, arm, results)
        run["index"] = {"name": index, "chunks": summary.index_chunks, "documents": summary.index_documents,
                        "build_seconds": round(summary.seconds, 1)}
        runs.append(run)
    return runs


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, stream=sys.stderr,
                        format="%(levelname)s %(name)s: %(message)s")
    from rag_system.config import load_settings
    from rag_system.embedding.registry import shared_embedder

    overrides = _overrides(args.set)
    settings = load_settings().with_overrides(data_dir=str(args.cache_dir), **overrides)
    if args.docs:
        corpora = [custom_corpus(args.docs, args.gold, args.case_sensitive)]
    else:
        known = known_corpora(args.data_dir)
        names = ALL if args.corpus == "all" else DEBREF if args.corpus == "debref" else (args.corpus,)
        corpora = [known[n] for n in names]
    missing = [str(s) for c in corpora for s in (*c.sources, *c.gold) if not s.exists()]
    if missing:
        sys.stderr.write("error: missing evaluation data: " + ", ".join(missing) + "\n")
        return 2
    from rag_system.embedding.registry import default_name

    names = [n.strip() for n in args.embedders.split(",")] if args.embedders else [default_name(settings)]
    all_runs: list[dict[str, Any]] = []
    for name in names:
        arm_settings = settings if name == settings.embedder else settings.with_overrides(embedder=name)
        embedder = shared_embedder(arm_settings)
        for corpus in corpora:
            sys.stderr.write(f"== {corpus.name} ({name})\n")
            runs = run_corpus(corpus, arm_settings, embedder, args)
            all_runs.extend(runs)
            sys.stdout.write(format_table(runs) + "\n")
            sys.stdout.flush()
    if len(corpora) > 1 or args.compare_modes or len(names) > 1:
        sys.stdout.write("\n== summary\n" + format_table(all_runs) + "\n")
    sys.stdout.write("\n" + format_quality_table(all_runs) + "\n")
    if args.json_out:
        payload: Any = all_runs[0] if len(all_runs) == 1 else all_runs
        args.json_out.write_text(json.dumps(payload, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
