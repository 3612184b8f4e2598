"""Offline fusion reproduces the engine: the `default` arm ranks exactly as hybrid retrieval does."""

from __future__ import annotations

import json

import pytest

from eval.corpora import custom_corpus
from eval.leg_analysis import Arm, collect, default_arms, evaluate, first_rank, fuse
from rag_system.indexing.builder import build_index
from rag_system.retrieval.engine import RetrievalEngine

TOPICS = ["penguins huddle together to survive the antarctic winter",
          "sourdough bread needs a lively starter and a long proof",
          "the violin has four strings tuned in perfect fifths",
          "glaciers carve u-shaped valleys as they slowly advance"]
QUERIES = [("q1", "how are violin strings tuned", "tuned in perfect fifths, fact 2"),
           ("q2", "what does bread dough need", "lively starter and a long proof, fact 5"),
           ("q3", "penguins in winter", "antarctic winter, fact 8")]


@pytest.fixture(scope="module")
def built(tmp_path_factory, embedder):  # type: ignore[no-untyped-def]
    from rag_system.config import load_settings

    root = tmp_path_factory.mktemp("legs")
    docs = root / "docs"
    docs.mkdir()
    (docs / "facts.txt").write_text("\n\n".join(f"Paragraph {i}: {TOPICS[i % 4]}, fact {i}." for i in range(40)))
    gold = root / "gold.jsonl"
    gold.write_text("\n".join(json.dumps({"id": i, "query": q, "expected": [e]}) for i, q, e in QUERIES) + "\n")
    settings = load_settings(environ={"DOCENT_DATA_DIR": str(root / "data")}, dotenv_path=None)
    settings = settings.with_overrides(chunk_tokens=128, chunk_window_tokens=48)
    build_index([docs], "legs", settings, embedder=embedder)
    corpus = custom_corpus(docs, gold, case_sensitive=False)
    return settings, RetrievalEngine(settings, embedder), collect(corpus, settings, embedder, "legs", sorted({a.depth for a in default_arms(settings)}))


def test_default_arm_reproduces_engine_rankings(built) -> None:  # type: ignore[no-untyped-def]
    settings, engine, items = built
    arms = {arm.name: arm for arm in default_arms(settings)}
    for item in items:
        for arm_name, mode in (("default", "hybrid"), ("fts_only", "fts_only"), ("vector_only", "vector_only")):
            result = engine.retrieve("legs", item.query, engine.options(mode=mode, k=20))
            assert fuse(item, arms[arm_name]) == [c.chunk_id for c in result.candidates], (item.id, mode)
        assert item.relevant, item.id  # every gold string is in some chunk


def test_arms_report_metrics_and_first_ranks(built) -> None:  # type: ignore[no-untyped-def]
    settings, _, items = built
    for arm in [*default_arms(settings), Arm("zclip", {"fts": 0.5, "fts_exact": 0.5, "vector": 1.0}, "zclip")]:
        metrics = evaluate(items, arm)
        assert set(metrics) == {"recall@5", "recall@10", "recall@20", "mrr", "ndcg@10"}
        assert all(0.0 <= v <= 1.0 for v in metrics.values())
    hybrid = next(a for a in default_arms(settings) if a.name == "default")
    assert all(first_rank(item, fuse(item, hybrid)) is not None for item in items)
    nothing = Arm("no legs", {})
    assert fuse(items[0], nothing) == []


def test_unknown_fusion_is_rejected(built) -> None:  # type: ignore[no-untyped-def]
    _, _, items = built
    with pytest.raises(ValueError, match="unknown fusion 'median'"):
        fuse(items[0], Arm("bad", {"vector": 1.0}, "median"))
