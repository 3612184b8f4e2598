"""The answer harness on a user's own folder and gold file, with the extractive backend."""

from __future__ import annotations

import json
from pathlib import Path

from eval.run_answers import main


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
    assert rows["g3"]["refused"] and "mongolia" in rows["g3"]["refusal_reason"]
