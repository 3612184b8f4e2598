"""First-stage retrieval on a real index: modes, filters on both legs, hostile queries."""

from __future__ import annotations

from pathlib import Path

import pytest

from rag_system.indexing.builder import build_index
from rag_system.retrieval.engine import RetrievalEngine
from rag_system.retrieval.filters import FilterError
from rag_system.retrieval.first_stage import FullTextUnavailableError
from rag_system.retrieval.types import RetrievalModeError

DOCS = {
    "quic.txt": "QUIC streams.\n\nThe ack_delay_exponent defaults to 3 when absent.\n\n"
                "Flow control limits how much data a peer may send.",
    "garden.md": "# Garden\n\nTomatoes need six hours of sun.\n\n## Water\n\nWater hydrangeas every morning.",
    "policy.txt": "Leave policy.\n\nEmployees accrue 25 days of annual leave.\f"
                  "Page two.\n\nSick leave requires a note after three days.",
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory, embedder):  # type: ignore[no-untyped-def]
    from rag_system.config import load_settings

    root = tmp_path_factory.mktemp("retrieval")
    folder = root / "docs"
    folder.mkdir()
    for name, text in DOCS.items():
        (folder / name).write_text(text)
    settings = load_settings(environ={"DOCENT_DATA_DIR": str(root / "data")}, dotenv_path=None)
    build_index([folder], "r", settings, embedder=embedder)
    return RetrievalEngine(settings, embedder)


def names(result) -> list[str]:  # type: ignore[no-untyped-def]
    return [c.document_name for c in result.candidates]


@pytest.mark.parametrize("mode", ["hybrid", "vector_only", "fts_only"])
def test_each_mode_finds_the_answer(engine: RetrievalEngine, mode: str) -> None:
    result = engine.retrieve("r", "default ack_delay_exponent", engine.options(mode=mode, k=5))
    assert names(result)[0] == "quic.txt"
    assert result.mode == mode
    top = result.candidates[0]
    if mode != "vector_only":
        assert top.fts_rank == 1
    if mode != "fts_only":
        assert top.vector_rank is not None and top.vector_similarity is not None
    assert result.timings_ms["first_stage_ms"] > 0
    # The stage's timings, in this order, built from what the legs return: the clients' `timings_ms`.
    keys = {"hybrid": ["embed_ms", "vector_ms", "fts_ms"], "vector_only": ["embed_ms", "vector_ms", "fts_ms"],
            "fts_only": ["fts_ms"]}[mode] + ["fuse_ms", "first_stage_ms"]
    assert [k for k in result.timings_ms if k != "rerank_ms"] == keys
    assert all(result.timings_ms[k] > 0 for k in keys if (k, mode) != ("fts_ms", "vector_only"))  # no fts leg: 0


def test_hybrid_results_are_deduplicated_and_scored(engine: RetrievalEngine) -> None:
    result = engine.retrieve("r", "leave days", engine.options(k=10))
    ids = [c.chunk_id for c in result.candidates]
    assert len(ids) == len(set(ids))
    scores = [c.score for c in result.candidates]
    assert scores == sorted(scores, reverse=True)
    assert isinstance(result.evidence_score, float)


def test_unknown_mode_is_rejected(engine: RetrievalEngine) -> None:
    with pytest.raises(RetrievalModeError, match="unknown retrieval mode"):
        engine.retrieve("r", "x", engine.options(mode="semantic"))
    with pytest.raises(RetrievalModeError, match="unknown fusion"):
        engine.retrieve("r", "x", engine.options(fusion="borda"))


@pytest.mark.parametrize("fusion", ["meanmax", "score", "rrf"])
def test_every_fusion_rule_ranks_the_answer_first(engine: RetrievalEngine, fusion: str) -> None:
    result = engine.retrieve("r", "how many days of annual leave", engine.options(fusion=fusion, k=5))
    assert names(result)[0] == "policy.txt"
    assert result.candidates[0].score > result.candidates[-1].score


@pytest.mark.parametrize("query", ['"', 'what is "ack_delay', "title:foo AND (", "+-~*^", "", "ﬀ ‽ 😀"])
def test_hostile_queries_never_break_search(engine: RetrievalEngine, query: str) -> None:
    for mode in ("hybrid", "fts_only"):
        result = engine.retrieve("r", query, engine.options(mode=mode, k=5))
        assert result.warnings == []


def test_filters_apply_to_both_legs(engine: RetrievalEngine) -> None:
    filters = {"document_name": "policy.txt"}
    for mode in ("hybrid", "vector_only", "fts_only"):
        result = engine.retrieve("r", "hydrangeas tomatoes leave", engine.options(mode=mode, filters=filters))
        assert set(names(result)) == {"policy.txt"}
    page_two = engine.retrieve("r", "leave", engine.options(filters={"document_name": "policy.txt", "page": 2}))
    assert page_two.candidates and all(c.page_start <= 2 <= c.page_end for c in page_two.candidates)
    md_only = engine.retrieve("r", "water", engine.options(filters={"file_type": "md"}))
    assert set(names(md_only)) == {"garden.md"}
    nothing = engine.retrieve("r", "water", engine.options(filters={"document_id": "0" * 64}))
    assert nothing.candidates == [] and nothing.evidence_score == 0.0
    with pytest.raises(FilterError):
        engine.retrieve("r", "water", engine.options(filters={"page": {"gte": "1 OR 1=1"}}))


@pytest.mark.parametrize("window_tokens", [0, 128])
def test_hybrid_degrades_to_vector_when_full_text_fails(tmp_path: Path, embedder,  # type: ignore[no-untyped-def]
                                                         window_tokens: int) -> None:
    from rag_system.config import load_settings

    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.txt").write_text("Penguins live in the southern hemisphere.")
    settings = load_settings(environ={"DOCENT_DATA_DIR": str(tmp_path / "data")}, dotenv_path=None)
    settings = settings.with_overrides(chunk_window_tokens=window_tokens)
    build_index([folder], "d", settings, embedder=embedder)
    engine = RetrievalEngine(settings, embedder)
    handle = engine.table("d")
    assert (handle.windows is not None) == bool(window_tokens)
    for table in (handle.table, handle.windows.table if handle.windows else None):
        for index in table.list_indices() if table is not None else ():
            table.drop_index(index.name)  # a real broken full-text leg: no FTS index at all
    result = engine.retrieve("d", "penguins", engine.options(mode="hybrid"))
    assert names(result) == ["a.txt"]
    assert result.warnings and "vector-only" in result.warnings[0]
    with pytest.raises(FullTextUnavailableError, match="rebuild"):
        engine.retrieve("d", "penguins", engine.options(mode="fts_only"))
    build_index([folder], "d", settings, embedder=embedder)  # a rebuild restores the leg
    healed = engine.retrieve("d", "penguins", engine.options(mode="hybrid"))
    assert healed.warnings == [] and healed.candidates[0].fts_rank == 1


def test_rerank_requested_without_a_model_is_skipped_with_a_warning(engine: RetrievalEngine) -> None:
    engine = RetrievalEngine(engine.settings.with_overrides(reranker_model=""), engine.embedder, db=engine.db)
    result = engine.retrieve("r", "annual leave", engine.options(rerank=True))
    assert result.final is None and result.reranked == []
    assert any("reranking skipped" in w for w in result.warnings)


def test_rerank_select_stage_with_a_real_cross_encoder(tmp_path: Path, embedder) -> None:  # type: ignore[no-untyped-def]
    """Wiring through a real (untrained-head) cross-encoder: scores, selection, reasons."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from rag_system.config import load_settings
    from rag_system.embedding.minilm import resolve_model_path

    _, source = resolve_model_path("")
    torch.manual_seed(7)
    model = AutoModelForSequenceClassification.from_pretrained(str(source), num_labels=1, local_files_only=True)
    ce = tmp_path / "ce"
    model.save_pretrained(ce)
    AutoTokenizer.from_pretrained(str(source), local_files_only=True).save_pretrained(ce)
    folder = tmp_path / "docs"
    folder.mkdir()
    for name, text in DOCS.items():
        (folder / name).write_text(text)
    settings = load_settings(environ={"DOCENT_DATA_DIR": str(tmp_path / "data"), "RERANKER_MODEL": str(ce),
                                      "RERANKER_TOP_K": "2", "RERANKER_MIN_KEEP": "1"}, dotenv_path=None)
    build_index([folder], "rr", settings, embedder=embedder)
    engine = RetrievalEngine(settings, embedder)
    result = engine.retrieve("rr", "water and leave", engine.options(rerank=True, k=6, rerank_blend=0))
    _, status = engine.reranker()
    assert status.loaded
    assert result.final is not None and 1 <= len(result.final) <= 2
    assert len(result.reranked) == len(result.candidates)
    scores = [r.score for r in result.reranked]
    assert scores == sorted(scores, reverse=True)
    assert [r.candidate for r in result.reranked if r.kept] == result.final
    assert "rerank_ms" in result.timings_ms
    assert result.to_json()["rerank"][0]["reason"] in {"above_min_score", "min_keep"}


def test_a_compound_query_is_also_ranked_by_its_question_sentence(engine: RetrievalEngine) -> None:
    query = "I keep a small garden behind the house. How often should hydrangeas be watered?"
    result = engine.retrieve("r", query, engine.options(k=5))
    assert result.legs["vector_focus"] and result.legs["vector"]
    assert len(result.leg_scores["vector_focus"]) == len(result.legs["vector_focus"])
    assert names(result)[0] == "garden.md"
    whole = engine.embedder.embed([query])[0]
    focus = engine.embedder.embed(["How often should hydrangeas be watered?"])[0]
    assert not (whole == focus).all()
    off = engine.retrieve("r", query, engine.options(k=5, query_focus=False))
    assert "vector_focus" not in off.legs
    single = engine.retrieve("r", "How often should hydrangeas be watered?", engine.options(k=5))
    assert "vector_focus" not in single.legs
    assert names(single)[0] == "garden.md"


def test_windowed_index_scores_a_chunk_by_its_best_window(tmp_path: Path, embedder) -> None:  # type: ignore[no-untyped-def]
    import numpy as np

    from rag_system.config import load_settings

    topics = ["penguins huddle together to survive the antarctic winter",
              "sourdough bread needs a lively starter and a long proof",
              "the violin has four strings tuned in perfect fifths",
              "glaciers carve u-shaped valleys as they slowly advance"]
    paragraphs = [f"Paragraph {i}: {topics[i % 4]}, which is fact number {i}." for i in range(16)]
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "long.txt").write_text("\n\n".join(paragraphs))
    settings = load_settings(environ={"DOCENT_DATA_DIR": str(tmp_path / "data")}, dotenv_path=None)
    settings = settings.with_overrides(chunk_window_tokens=48)
    build_index([folder], "w", settings, embedder=embedder)
    engine = RetrievalEngine(settings, embedder)
    table = engine.table("w")
    assert table.windows is not None
    windows = table.windows.table.to_arrow().to_pylist()
    assert len({w["chunk_id"] for w in windows}) == table.count() < len(windows)
    query = "how do violins get tuned"
    result = engine.retrieve("w", query, engine.options(mode="hybrid", k=5))
    assert set(result.legs) == {"fts", "fts_exact", "vector"}
    top = result.candidates[0]
    mine = [w["text"] for w in windows if w["chunk_id"] == top.chunk_id]
    assert all(w.startswith("long.txt\n") for w in mine)  # the context line opens every window
    sims = embedder.embed(mine) @ embedder.embed([query])[0]
    assert top.vector_similarity == pytest.approx(float(np.max(sims)), abs=2e-3)  # best window, not the mean
    plain = engine.retrieve("w", query, engine.options(mode="fts_only", k=5, fts_exact=False))
    assert "fts_exact" not in plain.legs and plain.legs["fts"] and plain.candidates


def test_exact_ranking_asks_content_words_and_a_stop_word_question_still_finds_its_line(
        tmp_path: Path, embedder) -> None:  # type: ignore[no-untyped-def]
    from rag_system.config import load_settings
    from rag_system.retrieval.first_stage import content_terms

    assert content_terms("what is the ack_delay_exponent of a quic endpoint") == "ack_delay_exponent quic endpoint"
    assert content_terms("to be or not to be") == "to be or not to be"  # nothing else left: all of it
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "hamlet.txt").write_text("The prince speaks.\n\nTo be, or not to be, that is the question.")
    (folder / "other.txt").write_text("Glaciers carve valleys as they slowly advance down the mountain.")
    settings = load_settings(environ={"DOCENT_DATA_DIR": str(tmp_path / "data")}, dotenv_path=None)
    build_index([folder], "h", settings, embedder=embedder)
    engine = RetrievalEngine(settings, embedder)
    result = engine.retrieve("h", "to be or not to be", engine.options(mode="fts_only", k=5))
    assert result.legs["fts"] == []  # the stemmed analyzer drops every word of it
    assert result.legs["fts_exact"] and result.candidates[0].document_name == "hamlet.txt"
