"""Answer evaluation: does every answer cite checkable evidence, is the fact in it, and can it be trusted?

    python -m eval.run_answers --data-dir ../shared/eval-data --corpus rfc --json-out rfc-answers.json
    python -m eval.run_answers --data-dir ../shared/eval-data --answer-set all --backend extractive
    python -m eval.run_answers --data-dir ../shared/eval-data --answer-set negation --corpus pydocs
    python -m eval.run_answers --docs ~/folder --gold questions.jsonl --backend extractive

Per row: the answer, its source (llm | llm_repaired | extractive | refusal),
whether its citations validate (re-checked here, independently of the
pipeline, against the evidence blocks it was given), whether a cited block
contains an expected string ("cited-fact recall"), refusal, time to first
token and to the full answer; and the trust judgements of `eval.judge`,
also independent of the pipeline: facts (numbers, identifiers, quoted terms,
names) its cited blocks do not state, sentences whose polarity contradicts
the cited sentence, a negation row's yes/no stance, whether a numeric row's
numbers are all in the cited blocks, and the chunker's context line in the
answer, a quote or a source card. `--answer-set` runs the hand-written sets
of `eval/answer_sets/` (each row over its own corpus; `--corpus` then
filters). The index is the same cached one `eval.run_eval` builds, so
retrieval and answers are measured on one index.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import docent_native

from eval.answer_report import format_table, summarise
from eval.answer_sets import SETS, AnswerRow, is_answer_set_file, load_rows, load_sets
from eval.corpora import ALL, Corpus, add_corpus_arguments, custom_corpus, known_corpora, load_gold
from eval.judge.verdict import judge_trust
from eval.metrics import GoldRow, normalise
from eval.run_eval import _index_name, _overrides

log = logging.getLogger("eval.run_answers")

Job = tuple[Corpus, list[AnswerRow]]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m eval.run_answers", description=__doc__.split("\n")[0])
    add_corpus_arguments(p, ALL)
    p.add_argument("--backend", choices=("auto", "llamacpp", "ollama", "openai", "extractive"), default=None)
    p.add_argument("--sample", type=int, default=0, help="evaluate N rows spread evenly over the gold file")
    p.add_argument("--answer-set", action="append", choices=(*SETS, "all"), default=[],
                   help="a hand-written answer set of eval/answer_sets (repeatable; 'all' for every set)")
    args = p.parse_args(argv)
    if bool(args.docs) != bool(args.gold):
        p.error("--docs and --gold go together")
    if args.answer_set and args.docs:
        p.error("--answer-set runs over the shared corpora; with --docs, pass an answer-set file as --gold")
    if not args.corpus and not args.docs and not args.answer_set:
        p.error("give --corpus, --answer-set or --docs/--gold")
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
    # which blocks hold an expected fact: a miss reads "the fact was in [3], the answer cited [1, 2]"
    fact_blocks = [n for n in sorted(blocks) if any(w in normalise(blocks[n], case_sensitive) for w in wanted)]
    return {"valid": None if refused else bool(report and report["valid"]), "cited_fact": bool(fact),
            "evidence_fact": bool(in_evidence), "fact_blocks": fact_blocks, "refused": refused,
            "blocks": len(ordered)}


def _gold_rows(corpus: Corpus) -> list[AnswerRow]:
    return [AnswerRow(id=r.id, corpus=corpus.name, kind="gold", query=r.query, expected=r.expected, match=r.match)
            for r in load_gold(corpus.gold)]


def _pick(rows: list[AnswerRow], args: argparse.Namespace) -> list[AnswerRow]:
    rows = rows[: args.limit or None]
    if args.sample and args.sample < len(rows):
        rows = [rows[round(i * (len(rows) - 1) / max(args.sample - 1, 1))] for i in range(args.sample)]
    return rows


def plan(args: argparse.Namespace) -> tuple[list[Job], str]:
    """Which rows run over which corpus, and what to call the rows in the table."""
    if args.docs:
        corpus = custom_corpus(args.docs, args.gold, args.case_sensitive)
        if is_answer_set_file(args.gold):
            rows = [replace(r, corpus=corpus.name) for r in load_rows(args.gold, corpus.name)]
            return [(corpus, _pick(rows, args))], args.gold.stem
        return [(corpus, _pick(_gold_rows(corpus), args))], "gold"
    known = known_corpora(args.data_dir)
    if not args.answer_set:
        corpus = known[args.corpus]
        return [(corpus, _pick(_gold_rows(corpus), args))], "gold"
    names = SETS if "all" in args.answer_set else tuple(dict.fromkeys(args.answer_set))
    rows = [r for r in load_sets(names) if not args.corpus or r.corpus == args.corpus]
    jobs: dict[str, list[AnswerRow]] = {}
    for row in _pick(rows, args):
        jobs.setdefault(row.corpus, []).append(row)
    return [(known[name], group) for name, group in jobs.items()], "all sets" if names == SETS else "+".join(names)


def answer_row(pipeline: Any, index: str, row: AnswerRow, corpus: Corpus, backend: str | None) -> dict[str, Any]:
    first: list[float] = []
    t0 = time.perf_counter()

    def emit(event: str, data: dict[str, Any]) -> None:
        if event == "token" and not first:
            first.append(time.perf_counter())

    request = pipeline.request(row.query, [index], backend=backend, query_decompose=False)
    payload = pipeline.run(request, emit).to_json()
    total = (time.perf_counter() - t0) * 1000
    verdict = judge(row.gold(), payload, corpus.case_sensitive)
    if not row.answerable:
        verdict.update(cited_fact=None, evidence_fact=None)
    trust = judge_trust(payload, documented=row.expected[0] if row.polarity else None,
                        polarity=row.polarity, value=row.value)
    return {"id": row.id, "corpus": corpus.name, "kind": row.kind, "query": row.query, "answer": payload["answer"],
            "refusal_reason": payload.get("refusal_reason"),
            # what the first draft failed on, when the checks replaced it (why a model answer became a quote)
            "first_validation": _findings(payload.get("first_validation")),
            "answer_source": payload["answer_source"], "backend": payload["backend"], **verdict, **trust,
            "citations": [{k: c[k] for k in ("n", "document_name", "page_start", "page_end")}
                          for c in payload["citations"]],
            "first_token_ms": round(((first[0] if first else time.perf_counter()) - t0) * 1000, 1),
            "total_ms": round(total, 1), "token_usage": payload["token_usage"]["total"]}


def _findings(report: dict[str, Any] | None) -> dict[str, Any] | None:
    if not report:
        return None
    return {k: v for k, v in report.items() if k != "sentences" and v not in (None, [], {}, 0)}


def evaluate(jobs: list[Job], settings: Any, args: argparse.Namespace, rows_from: str) -> dict[str, Any]:
    from rag_system.agent.pipeline import QueryPipeline
    from rag_system.generation.registry import BackendRegistry
    from rag_system.indexing.builder import build_index
    from rag_system.embedding.minilm import MiniLMEmbedder
    from rag_system.retrieval.engine import RetrievalEngine

    embedder = MiniLMEmbedder.from_settings(settings)
    pipeline = QueryPipeline(settings, RetrievalEngine(settings, embedder), BackendRegistry(settings))
    chosen = pipeline.registry.chain(args.backend)[0]
    all_rows: list[dict[str, Any]] = []
    runs: list[dict[str, Any]] = []
    total = sum(len(rows) for _, rows in jobs)
    for corpus, rows in jobs:
        index = _index_name(corpus, settings)
        build_index(list(corpus.sources), index, settings, embedder=embedder)
        out_rows = []
        for row in rows:
            out = answer_row(pipeline, index, row, corpus, args.backend)
            out_rows.append(out)
            sys.stderr.write(f"[{len(all_rows) + len(out_rows)}/{total}] {row.id} {out['answer_source']:<12} "
                             f"fact={out['cited_fact']!s:<5} {out['total_ms'] / 1000:.1f}s\n")
        all_rows.extend(out_rows)
        runs.append({"corpus": corpus.name, "rows_from": rows_from, "n": len(out_rows),
                     "summary": summarise(out_rows)})
    name = jobs[0][0].name if len(jobs) == 1 else "+".join(corpus.name for corpus, _ in jobs)
    result = {"corpus": name, "rows_from": rows_from, "n": len(all_rows),
              "backend": args.backend or settings.llm_backend, "chosen_backend": chosen.name,
              "summary": summarise(all_rows), "runs": runs, "rows": all_rows}
    if len(runs) > 1:
        result["runs"].append({"corpus": "all", "rows_from": rows_from, "n": len(all_rows),
                               "summary": result["summary"]})
    return result


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, stream=sys.stderr,
                        format="%(levelname)s %(name)s: %(message)s")
    from rag_system.config import load_settings

    settings = load_settings().with_overrides(data_dir=str(args.cache_dir), **_overrides(args.set))
    try:
        jobs, rows_from = plan(args)
    except FileNotFoundError as exc:
        sys.stderr.write(f"error: missing evaluation data: {exc.filename}\n")
        return 2
    missing = [str(s) for corpus, _ in jobs for s in (*corpus.sources, *corpus.gold) if not s.exists()]
    if missing:
        sys.stderr.write("error: missing evaluation data: " + ", ".join(missing) + "\n")
        return 2
    if not any(rows for _, rows in jobs):
        sys.stderr.write("error: no rows to evaluate\n")
        return 2
    result = evaluate(jobs, settings, args, rows_from)
    sys.stdout.write(json.dumps({k: result[k] for k in ("corpus", "n", "backend", "chosen_backend", "summary")},
                                indent=2) + "\n")
    sys.stderr.write(format_table(result["runs"]) + "\n")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
