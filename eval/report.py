"""Turn per-query retrieval results into the harness's JSON and text tables."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from eval.corpora import Corpus
from eval.metrics import GoldRow, mean, percentile, relevance, row_metrics

METRICS = ("recall@5", "recall@10", "recall@20", "mrr", "ndcg@10")


def summarise(corpus: Corpus, arm: dict[str, Any], results: list[tuple[GoldRow, Any]]) -> dict[str, Any]:
    rows_out: list[dict[str, Any]] = []
    latencies: list[float] = []
    rerank_latencies: list[float] = []
    per_metric: dict[str, list[float]] = defaultdict(list)
    slices: dict[str, dict[str, list[dict[str, float]]]] = defaultdict(lambda: defaultdict(list))
    for row, result in results:
        texts = [c.text for c in result.candidates]
        first = row_metrics(texts, row, corpus.case_sensitive)
        # Final = after rerank/select; equal to the first stage until a reranker runs.
        final_texts = [c.text for c in getattr(result, "final", None) or result.candidates]
        final = row_metrics(final_texts, row, corpus.case_sensitive)
        for name in METRICS:
            per_metric[name].append(first[name])
        per_metric["ndcg@10_final"].append(final["ndcg@10"])
        reranked = getattr(result, "reranked", None)
        if reranked:  # every first-stage candidate in the reranker's order (unscored ones last)
            after = row_metrics([r.candidate.text for r in reranked], row, corpus.case_sensitive)
            for name in METRICS:
                per_metric[f"{name}_reranked"].append(after[name])
            rerank_latencies.append(result.timings_ms.get("rerank_ms", 0.0))
        latency = result.timings_ms.get("first_stage_ms", 0.0)
        latencies.append(latency)
        for dim, value in row.dimensions:
            slices[dim][value].append(first)
        rows_out.append({
            "id": row.id, "query": row.query, **{k: round(v, 4) for k, v in first.items()},
            "ndcg@10_final": round(final["ndcg@10"], 4),
            "first_relevant_rank": _first_relevant(texts, row, corpus),
            "latency_ms": round(latency, 2), "warnings": list(result.warnings),
        })
    return {
        "corpus": corpus.name,
        "n": len(results),
        "arm": arm,
        "metrics": {name: round(mean(values), 4) for name, values in per_metric.items()},
        "latency_ms": {"p50": round(percentile(latencies, 0.5), 2), "p95": round(percentile(latencies, 0.95), 2)},
        **({"rerank_ms": {"p50": round(percentile(rerank_latencies, 0.5), 2),
                          "p95": round(percentile(rerank_latencies, 0.95), 2)}} if rerank_latencies else {}),
        "slices": {dim: {value: {m: round(mean([r[m] for r in rs]), 4) for m in ("recall@10", "ndcg@10")}
                         | {"n": len(rs)} for value, rs in sorted(values.items())}
                   for dim, values in sorted(slices.items())},
        "rows": rows_out,
    }


def _first_relevant(texts: list[str], row: GoldRow, corpus: Corpus) -> int | None:
    for rank, hit in enumerate(relevance(texts, row, corpus.case_sensitive), start=1):
        if any(hit):
            return rank
    return None


def format_quality_table(runs: list[dict[str, Any]]) -> str:
    """One Markdown row per run: first stage and, when a reranker ran, the reranked order, with p50s."""
    lines = ["| corpus | embedder | rerank | nDCG@10 | R@10 | R@20 | first stage p50 ms | rerank p50 ms |",
             "|---|---|---|---|---|---|---|---|"]
    for run in runs:
        m, reranked = run["metrics"], "ndcg@10_reranked" in run["metrics"]
        for suffix in ("", "_reranked") if reranked else ("",):
            lines.append(
                f"| {run['corpus']} | {run['arm'].get('embedder', 'minilm')} | {'on' if suffix else 'off'} | "
                + " | ".join(f"{m[name + suffix]:.3f}" for name in ("ndcg@10", "recall@10", "recall@20"))
                + f" | {run['latency_ms']['p50']:.1f} | "
                + (f"{run['rerank_ms']['p50']:.0f} |" if suffix else "– |"))
    return "\n".join(lines)


def format_table(runs: list[dict[str, Any]]) -> str:
    header = f"{'corpus':<16} {'embedder':<9} {'mode':<12} {'n':>3} {'chunks':>6} " + " ".join(
        f"{m:>9}" for m in (*METRICS, "ndcg@10_final")) + f" {'p50 ms':>7} {'p95 ms':>7}"
    lines = [header, "-" * len(header)]
    for run in runs:
        metrics = run["metrics"]
        lines.append(
            f"{run['corpus']:<16} {run['arm'].get('embedder', 'minilm'):<9} {run['arm']['mode']:<12} {run['n']:>3} "
            f"{run['index']['chunks']:>6} "
            + " ".join(f"{metrics.get(m, 0.0):>9.3f}" for m in (*METRICS, "ndcg@10_final"))
            + f" {run['latency_ms']['p50']:>7.1f} {run['latency_ms']['p95']:>7.1f}")
    return "\n".join(lines)
