"""The answer harness on a user's own folder and gold file, with the extractive backend."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eval.run_answers import main
from eval.tests import EVAL_DATA


def test_custom_folder_and_gold_file_with_extractive_answers(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("Warranty terms.\n\nThe warranty lasts 24 months from delivery. "
                                "Returns need a receipt from the shop.")
    (docs / "b.txt").write_text("Office hours.\n\nOur office opens at 9 am on weekdays and closes at 5 pm.")
    gold = tmp_path / "gold.jsonl"
    gold.write_text("\n".join(json.dumps(r) for r in [
        {"id": "g1", "query": "How long does the warranty last?", "expected": ["lasts 24 months"]},
        {"id": "g2", "query": "When does the office open on weekdays?", "expected": ["opens at 9 am"]},
        {"id": "g3", "query": "What is the capital of Mongolia?", "expected": ["Ulaanbaatar"]},
    ]) + "\n")
    out = tmp_path / "answers.json"
    rc = main(["--docs", str(docs), "--gold", str(gold), "--backend", "extractive", "--json-out", str(out),
               "--cache-dir", str(tmp_path / "cache")])
    assert rc == 0
    result = json.loads(out.read_text())
    summary = result["summary"]
    assert result["n"] == 3 and result["chosen_backend"] == "extractive"
    assert summary["citation_validity"] == 1.0
    assert summary["cited_fact_recall"] == round(2 / 3, 3)
    assert summary["refusal_rate"] == round(1 / 3, 3)
    rows = {r["id"]: r for r in result["rows"]}
    assert rows["g1"]["cited_fact"] and rows["g2"]["cited_fact"] and rows["g1"]["valid"]
    assert rows["g3"]["refused"] and "mongolia" in rows["g3"]["refusal_reason"].lower()


def _answer_set_gold(tmp_path: Path) -> tuple[Path, Path]:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "router.txt").write_text(
        "Router specifications.\n\nThe R7 router does not support Bluetooth pairing. "
        "Its admin page listens on port 8443. The R7 ships with firmware version 2.4.1.")
    (docs / "returns.txt").write_text("Returns policy.\n\nReturns are accepted within 30 days of delivery.")
    gold = tmp_path / "sets.jsonl"
    gold.write_text("\n".join(json.dumps(r) for r in [
        {"id": "n1", "kind": "negation", "query": "Can I pair the R7 router over Bluetooth?",
         "expected": ["does not support Bluetooth pairing"], "polarity": "negative"},
        {"id": "v1", "kind": "numeric", "query": "Which port does the R7 admin page listen on?",
         "expected": ["listens on port 8443"], "value": "8443"},
        {"id": "u1", "kind": "unanswerable", "query": "What is the capital of Mongolia?", "category": "world_fact",
         "why_unanswerable": "The folder is about a router and returns.", "absent": ["Mongolia", "Ulaanbaatar"]},
    ]) + "\n")
    return docs, gold


def test_an_answer_set_file_reports_refusals_polarity_and_numbers(tmp_path: Path) -> None:
    docs, gold = _answer_set_gold(tmp_path)
    out = tmp_path / "answers.json"
    assert main(["--docs", str(docs), "--gold", str(gold), "--backend", "extractive", "--json-out", str(out),
                 "--cache-dir", str(tmp_path / "cache")]) == 0
    result = json.loads(out.read_text())
    rows = {r["id"]: r for r in result["rows"]}
    summary = result["summary"]
    assert (summary["answerable_rows"], summary["unanswerable_rows"], summary["negation_rows"]) == (2, 1, 1)
    assert rows["u1"]["refused"] and summary["unanswerable_refusal_rate"] == 1.0
    assert summary["answerable_refusal_rate"] == 0.0 and summary["cited_fact_recall"] == 1.0
    # Verbatim extractive sentences can neither flip a polarity nor state a fact their block lacks.
    assert rows["n1"]["stance"] == "negative" and rows["n1"]["stance_error"] is False
    assert summary["polarity_error_rows"] == 0 and summary["unsupported_facts"] == 0
    assert rows["v1"]["numbers_supported"] is True and rows["v1"]["value_stated"] is True
    assert summary["context_leak_rows"] == sum(1 for r in rows.values() if any(r["context_leaks"].values()))


@pytest.mark.skipif(not (EVAL_DATA / "localgpt").is_dir(), reason=f"shared eval data not at {EVAL_DATA}")
def test_the_numeric_set_on_the_hr_corpus_with_the_extractive_backend(tmp_path: Path) -> None:
    out = tmp_path / "hr-numeric.json"
    assert main(["--data-dir", str(EVAL_DATA), "--answer-set", "numeric", "--corpus", "hr", "--backend",
                 "extractive", "--json-out", str(out), "--cache-dir", str(tmp_path / "cache")]) == 0
    result = json.loads(out.read_text())
    assert result["corpus"] == "hr" and result["rows_from"] == "numeric" and result["n"] == 4
    assert {r["kind"] for r in result["rows"]} == {"numeric"}
    summary = result["summary"]
    assert summary["citation_validity"] == 1.0 and summary["numeric_rows"] == 4
    assert summary["numbers_supported_rate"] == 1.0 and summary["unsupported_facts"] == 0
    assert summary["unanswerable_refusal_rate"] is None and summary["answerable_rows"] == 4
