"""Summaries and the text table of `eval.run_answers`: citation and fact metrics, and the trust metrics.

Rates are over the rows they concern: refusal of unanswerable rows over the
unanswerable rows, refusals of answerable rows over the answerable ones,
stance errors over negation rows, numbers over numeric rows that stated any.
Counts of rows, not of findings, so one bad answer is one error.
"""

from __future__ import annotations

from typing import Any

from eval.metrics import percentile


def _rate(hits: int, of: int) -> float | None:
    return round(hits / of, 3) if of else None


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(rows) or 1
    answered = [r for r in rows if not r["refused"]]
    answerable = [r for r in rows if r.get("kind") != "unanswerable"]
    unanswerable = [r for r in rows if r.get("kind") == "unanswerable"]
    negation = [r for r in rows if r.get("kind") == "negation"]
    numeric = [r for r in rows if r.get("kind") == "numeric"]
    sources: dict[str, int] = {}
    for r in rows:
        sources[r["answer_source"]] = sources.get(r["answer_source"], 0) + 1
    ttft = [r["first_token_ms"] for r in rows if r["answer_source"] != "refusal"]
    stated = [r for r in numeric if r.get("numbers_supported") is not None]
    judged = [r for r in negation if r.get("stance_error") is not None]
    leaks = {where: sum(1 for r in rows if r.get("context_leaks", {}).get(where)) for where in
             ("answer", "quotes", "sources")}
    facts_of = max(len(answerable), 1)
    return {
        "citation_validity": round(sum(1 for r in answered if r["valid"]) / len(answered), 3) if answered else None,
        "cited_fact_recall": round(sum(1 for r in answerable if r["cited_fact"]) / facts_of, 3),
        # Upper bound for cited-fact recall: the fact was in the evidence the answerer saw.
        "evidence_fact_recall": round(sum(1 for r in answerable if r["evidence_fact"]) / facts_of, 3),
        "mean_blocks": round(sum(r["blocks"] for r in rows) / n, 2),
        "refusal_rate": round(sum(1 for r in rows if r["refused"]) / n, 3),
        "answer_sources": sources,
        "first_token_ms_p50": round(percentile(ttft, 0.5), 1) if ttft else None,
        "answer_ms_p50": round(percentile([r["total_ms"] for r in rows], 0.5), 1),
        "answer_ms_p95": round(percentile([r["total_ms"] for r in rows], 0.95), 1),
        "answerable_rows": len(answerable),
        "answerable_refusal_rate": _rate(sum(1 for r in answerable if r["refused"]), len(answerable)),
        "unanswerable_rows": len(unanswerable),
        "unanswerable_refusal_rate": _rate(sum(1 for r in unanswerable if r["refused"]), len(unanswerable)),
        "polarity_error_rows": sum(1 for r in rows if r.get("polarity_errors")),
        "negation_rows": len(negation),
        "stance_errors": sum(1 for r in judged if r["stance_error"]),
        "stance_unjudged": sum(1 for r in negation if not r["refused"] and r.get("stance_error") is None),
        # Yes/no rows whose answer opens with the right "Yes"/"No" (a refusal or no reply word is wrong).
        "yes_no_right_rate": _rate(sum(1 for r in negation if r.get("reply_right")), len(negation)),
        "unsupported_fact_rows": sum(1 for r in rows if r.get("unsupported_facts")),
        "unsupported_facts": sum(len(r.get("unsupported_facts") or []) for r in rows),
        "numeric_rows": len(numeric),
        "numbers_supported_rate": _rate(sum(1 for r in stated if r["numbers_supported"]), len(stated)),
        "value_stated_rate": _rate(sum(1 for r in numeric if r.get("value_stated")), len(numeric)),
        "context_leak_rows": sum(1 for r in rows if any((r.get("context_leaks") or {}).values())),
        "context_leaks": leaks,
    }


def _cell(value: Any, width: int, key: str) -> str:
    if value is None:
        return f"{'-':>{width}}"
    if isinstance(value, float):
        return f"{value:>{width}.0f}" if key.endswith("_ms_p50") else f"{value:>{width}.3f}"
    return f"{value!s:>{width}}"


COLUMNS = (
    ("n", "n", 4), ("valid", "citation_validity", 6), ("fact", "cited_fact_recall", 6),
    ("in_ev", "evidence_fact_recall", 6), ("refuse_ans", "answerable_refusal_rate", 10),
    ("refuse_una", "unanswerable_refusal_rate", 10), ("polarity", "polarity_error_rows", 8),
    ("stance", "stance_errors", 6), ("yes_no", "yes_no_right_rate", 6), ("unsup_rows", "unsupported_fact_rows", 10),
    ("nums_ok", "numbers_supported_rate", 7), ("value", "value_stated_rate", 6),
    ("leaks", "context_leak_rows", 5), ("ttft_ms", "first_token_ms_p50", 8), ("p50_ms", "answer_ms_p50", 8),
)


def format_table(runs: list[dict[str, Any]]) -> str:
    """One line per run (corpus and rows): the headline metrics of `summarise`."""
    header = f"{'corpus':<10} {'rows':<14} " + " ".join(f"{title:>{width}}" for title, _, width in COLUMNS)
    lines = [header, "-" * len(header)]
    for run in runs:
        summary = {"n": run["n"], **run["summary"]}
        lines.append(f"{run['corpus']:<10} {run.get('rows_from', 'gold'):<14} "
                     + " ".join(_cell(summary.get(key), width, key) for _, key, width in COLUMNS))
    return "\n".join(lines)
