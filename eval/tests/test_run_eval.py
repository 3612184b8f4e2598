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


def test_reranked_order_is_reported_beside_the_first_stage(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    import pytest

    from rag_system.embedding.model_files import RERANKER_INT8, installed, models_root

    if not installed(RERANKER_INT8, models_root()):
        pytest.skip("the cross-encoder's model files are not fetched: run `make setup`")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("Japan\n\nTokyo is the capital and the most populous city of Japan.")
    (docs / "b.txt").write_text("Fruit\n\nBananas are an excellent source of potassium and fibre.")
    gold = tmp_path / "gold.jsonl"
    gold.write_text(json.dumps({"id": "g1", "query": "What is the capital of Japan?", "expected": ["Tokyo"]}) + "\n")
    out = tmp_path / "result.json"
    rc = main(["--docs", str(docs), "--gold", str(gold), "--rerank", "--set", "reranker_model=ms-marco-minilm",
               "--set", "embedder=minilm", "--json-out", str(out), "--cache-dir", str(tmp_path / "cache")])
    assert rc == 0
    run = json.loads(out.read_text())
    assert run["metrics"]["ndcg@10_reranked"] == 1.0 and run["metrics"]["recall@20_reranked"] == 1.0
    assert run["rerank_ms"]["p50"] > 0
    table = capsys.readouterr().out
    assert "| docs | minilm | off |" in table and "| docs | minilm | on |" in table
