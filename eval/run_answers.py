"""Answer evaluation: does every answer cite checkable evidence, and is the fact in it?

    python -m eval.run_answers --data-dir ../shared/eval-data --corpus rfc --json-out rfc-answers.json
    python -m eval.run_answers --docs ~/folder --gold questions.jsonl --backend extractive

Per row: the answer, its source (llm | llm_repaired | extractive | refusal),
whether its citations validate (re-checked here, independently of the
pipeline, against the evidence blocks it was given), whether a cited block
contains an expected string ("cited-fact recall"), refusal, time to first
token and to the full answer. The index is the same cached one
`eval.run_eval` builds, so retrieval and answers are measured on one index.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path
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
from eval.metrics import GoldRow, normalise, percentile
from eval.run_eval import _index_name, _overrides

log = logging.getLogger("eval.run_answers")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m eval.run_answers", description=__doc__.split("\n")[0])
    add_corpus_arguments(p, ALL)
    p.add_argument("--backend", choices=("auto", "llamacpp", "ollama", "openai", "extractive"), default=None)
    p.add_argument("--sample", type=int, default=0, help="evaluate N rows spread evenly over the gold file")
    args = p.parse_args(argv)
    check_corpus_arguments(p, args)
    return args


def judge(row: GoldRow, payload: dict[str, Any], case_sensitive: bool) -> dict[str, Any]:
    """Independent checks of one answer against its evidence and the gold row."""
    blocks = {s["n"]: s["text"] for s in payload["source_documents"]}
    ordered = [blocks[n] for n in sorted(blocks)]
    refused = payload["answer_source"] == "refusal"
    report = docent_native.validate_citations(payload["answer"], ordered) if not refused else None
    cited = [blocks[c["n"]] for c in payload["citations"] if c["n"] in blocks]
    wanted = [normalise(e, case_sensitive) for e in row.expected]
    found = [any(w in normalise(text, case_sensitive) for text in cited) for w in wanted]
    fact = all(found) if row.match == "all" else any(found)
    given = [any(w in normalise(text, case_sensitive) for text in ordered) for w in wanted]
    in_evidence = all(given) if row.match == "all" else any(given)
    return {"valid": None if refused else bool(report and report["valid"]), "cited_fact": bool(fact),
            "evidence_fact": bool(in_evidence), "refused": refused, "blocks": len(ordered)}


def evaluate(corpus: Corpus, settings: Any, args: argparse.Namespace) -> dict[str, Any]:
    from rag_system.agent.pipeline import QueryPipeline
    from rag_system.generation.registry import BackendRegistry
    from rag_system.indexing.builder import build_index
    from rag_system.indexing.embedder import Embedder
    from rag_system.retrieval.engine import RetrievalEngine

    embedder = Embedder.from_settings(settings)
    index = _index_name(corpus, settings)
    build_index(list(corpus.sources), index, settings, embedder=embedder)
    pipeline = QueryPipeline(settings, RetrievalEngine(settings, embedder), BackendRegistry(settings))
    chosen = pipeline.registry.chain(args.backend)[0]
    rows = load_gold(corpus.gold)[: args.limit or None]
    if args.sample and args.sample < len(rows):
        rows = [rows[round(i * (len(rows) - 1) / max(args.sample - 1, 1))] for i in range(args.sample)]
    out_rows: list[dict[str, Any]] = []
    for i, row in enumerate(rows, start=1):
        first: list[float] = []
        t0 = time.perf_counter()

        def emit(event: str, data: dict[str, Any]) -> None:
            if event == "token" and not first:
                first.append(time.perf_counter())

        request = pipeline.request(row.query, [index], backend=args.backend, query_decompose=False)
        payload = pipeline.run(request, emit).to_json()
        total = (time.perf_counter() - t0) * 1000
        verdict = judge(row, payload, corpus.case_sensitive)
        out_rows.append({"id": row.id, "query": row.query, "answer": payload["answer"],
                         "refusal_reason": payload.get("refusal_reason"),
                         "answer_source": payload["answer_source"], "backend": payload["backend"], **verdict,
                         "citations": [{k: c[k] for k in ("n", "document_name", "page_start", "page_end")}
                                       for c in payload["citations"]],
                         "first_token_ms": round(((first[0] if first else time.perf_counter()) - t0) * 1000, 1),
                         "total_ms": round(total, 1), "token_usage": payload["token_usage"]["total"]})
        sys.stderr.write(f"[{i}/{len(rows)}] {row.id} {payload['answer_source']:<12} "
                         f"fact={verdict['cited_fact']!s:<5} {total / 1000:.1f}s\n")
    return {"corpus": corpus.name, "n": len(out_rows), "backend": args.backend or settings.llm_backend,
            "chosen_backend": chosen.name, "summary": summarise(out_rows), "rows": out_rows}


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(rows) or 1
    answered = [r for r in rows if not r["refused"]]
    sources: dict[str, int] = {}
    for r in rows:
        sources[r["answer_source"]] = sources.get(r["answer_source"], 0) + 1
    ttft = [r["first_token_ms"] for r in rows if r["answer_source"] != "refusal"]
    return {
        "citation_validity": round(sum(1 for r in answered if r["valid"]) / len(answered), 3) if answered else None,
        "cited_fact_recall": round(sum(1 for r in rows if r["cited_fact"]) / n, 3),
        # Upper bound for cited-fact recall: the fact was in the evidence the answerer saw.
        "evidence_fact_recall": round(sum(1 for r in rows if r["evidence_fact"]) / n, 3),
        "mean_blocks": round(sum(r["blocks"] for r in rows) / n, 2),
        "refusal_rate": round(sum(1 for r in rows if r["refused"]) / n, 3),
        "answer_sources": sources,
        "first_token_ms_p50": round(percentile(ttft, 0.5), 1) if ttft else None,
        "answer_ms_p50": round(percentile([r["total_ms"] for r in rows], 0.5), 1),
        "answer_ms_p95": round(percentile([r["total_ms"] for r in rows], 0.95), 1),
    }


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, stream=sys.stderr,
                        format="%(levelname)s %(name)s: %(message)s")
    from rag_system.config import load_settings

    settings = load_settings().with_overrides(data_dir=str(args.cache_dir), **_overrides(args.set))
    corpus = (custom_corpus(args.docs, args.gold, args.case_sensitive) if args.docs
              else known_corpora(args.data_dir)[args.corpus])
    missing = [str(s) for s in (*corpus.sources, *corpus.gold) if not s.exists()]
    if missing:
        sys.stderr.write("error: missing evaluation data: " + ", ".join(missing) + "\n")
        return 2
    result = evaluate(corpus, settings, args)
    sys.stdout.write(json.dumps({k: result[k] for k in ("corpus", "n", "backend", "chosen_backend", "summary")},
                                indent=2) + "\n")
    if args.json_out:
        args.json_out.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
