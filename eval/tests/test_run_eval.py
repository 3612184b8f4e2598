"""The evaluation harness runs on a user's own folder and gold file."""

from __future__ import annotations

import json
from pathlib import Path

from eval.run_eval import main


def test_custom_folder_and_gold_file(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("The warranty lasts 24 months from delivery.\n\nReturns need a receipt.")
    (docs / "b.txt").write_text("Our office opens at 9 am on weekdays.")
    gold = tmp_path / "gold.jsonl"
    gold.write_text("\n".join(json.dumps(r) for r in [
        {"id": "g1", "query": "How long is the warranty?", "expected": ["lasts 24 months"], "match": "any"},
        {"id": "g2", "query": "When does the office open?", "expected": ["opens at 9 am"], "match": "any",
         "dimensions": {"topic": "hours"}},
    ]) + "\n")
    out = tmp_path / "result.json"
    rc = main(["--docs", str(docs), "--gold", str(gold), "--compare-modes", "--json-out", str(out),
               "--cache-dir", str(tmp_path / "cache")])
    assert rc == 0
    runs = json.loads(out.read_text())
    assert [r["arm"]["mode"] for r in runs] == ["hybrid", "vector_only", "fts_only"]
    for run in runs:
        assert run["n"] == 2 and set(run["metrics"]) >= {"recall@5", "recall@10", "recall@20", "mrr",
                                                          "ndcg@10", "ndcg@10_final"}
        assert run["metrics"]["recall@10"] == 1.0
        assert run["slices"]["topic"]["hours"]["n"] == 1
        assert [row["id"] for row in run["rows"]] == ["g1", "g2"]
