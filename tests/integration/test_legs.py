"""The first stage's legs as coroutines (rag_system/retrieval/legs.py) ask what the tables' own searches ask."""

from __future__ import annotations


import numpy as np
import pytest

from rag_system.indexing.builder import build_index
from rag_system.indexing.store import ChunkTable, connect
from rag_system.indexing.windows import EXACT_COLUMN, TEXT_COLUMN
from rag_system.retrieval import legs
from rag_system.retrieval.first_stage import ANN_REFINE_FACTOR, COLUMNS
from rag_system.retrieval.fts_query import sanitize_fts_query
from testkit.leg_references import fts_chunks, vector_chunks
from tests.integration.test_index_build import write_corpus

QUESTIONS = ("What is the value of fact 1.4 about topic2?", "Which topic has value 105?",
             "paragraph 2 of document 0")


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory, embedder) -> ChunkTable:  # type: ignore[no-untyped-def]
    from rag_system.config import load_settings

    root = tmp_path_factory.mktemp("legs")
    write_corpus(root / "docs", 3, sentences=30)
    settings = load_settings(environ={"DOCENT_DATA_DIR": str(root / "data")}, dotenv_path=None)
    settings = settings.with_overrides(chunk_tokens=200, chunk_window_tokens=64)
    build_index([root / "docs"], "legs", settings, embedder=embedder)
    handle = ChunkTable.open(connect(settings.resolved_lancedb_uri), "legs")
    assert handle.windows is not None and handle.vectors is not None
    return handle


@pytest.mark.parametrize("where", [None, "document_name = 'doc001.txt'"])
def test_legs_rank_as_the_tables_own_searches(table: ChunkTable, embedder, where) -> None:  # type: ignore[no-untyped-def]
    assert table.windows is not None and table.vectors is not None
    for question in QUESTIONS:
        terms = sanitize_fts_query(question)
        vector = embedder.embed_queries([question])[0]
        text, exact, near = legs.run([legs.fts_leg(table, terms, where, 8, TEXT_COLUMN),
                                      legs.fts_leg(table, terms, where, 8, EXACT_COLUMN),
                                      legs.vector_leg(table, vector, where, 8, ANN_REFINE_FACTOR)])
        for ranking, column in ((text, TEXT_COLUMN), (exact, EXACT_COLUMN)):
            expected = fts_chunks(table.windows, terms, where, 8, column)
            assert ranking.ids == [c for c, _ in expected] and ranking.ids
            assert np.allclose(ranking.scores, [s for _, s in expected])
        expected = vector_chunks(table.vectors, vector, where, 8)
        assert near.ids == [c for c, _ in expected] and near.ids
        assert np.allclose(near.scores, [1.0 - d for _, d in expected], atol=1e-6)
        assert all(r.ms > 0 for r in (text, exact, near))  # each leg times its own query
        if where:
            rows = legs.rows_by_id(table, near.ids, ["chunk_id", "document_name"])
            assert {row["document_name"] for row in rows} == {"doc001.txt"}


def test_a_failed_leg_is_returned_in_its_place(table: ChunkTable, embedder) -> None:  # type: ignore[no-untyped-def]
    vector = embedder.embed_queries(["Which topic has value 105?"])[0]
    broken, near = legs.run([legs.fts_leg(table, "value", None, 5, "no_such_column"),
                             legs.vector_leg(table, vector, None, 5, ANN_REFINE_FACTOR)])
    assert isinstance(broken, Exception)
    assert isinstance(near, legs.Ranking) and len(near.ids) == 5


def test_rows_come_in_the_order_asked_and_skip_missing_ids(table: ChunkTable) -> None:
    ids = [row["chunk_id"] for row in table.table.to_arrow().select(["chunk_id"]).to_pylist()][:6]
    asked = [ids[4], "no-such-chunk", ids[0], ids[2]]
    rows = legs.rows_by_id(table, asked, COLUMNS)
    assert [row["chunk_id"] for row in rows] == [ids[4], ids[0], ids[2]]
    assert rows == table.rows_by_id(asked, COLUMNS)
    assert legs.rows_by_id(table, [], COLUMNS) == []


def test_the_engine_looks_up_a_tables_embedder_once(table: ChunkTable, embedder, settings) -> None:  # type: ignore[no-untyped-def]
    from rag_system.retrieval.engine import RetrievalEngine

    engine = RetrievalEngine(settings, embedder, db=table.db)
    lookups: list[str] = []
    find = engine.embedder_for

    def counted(handle: ChunkTable) -> object:
        lookups.append(handle.index)
        return find(handle)

    engine.embedder_for = counted  # type: ignore[method-assign]
    options = engine.options(rerank=False)
    assert engine.retrieve("legs", "Which topic has value 105?", options).candidates
    engine.retrieve("legs", "paragraph 2 of document 0", options)
    assert lookups == ["legs"]  # read with the table when it was opened, not per question
    engine.forget("legs")
    engine.retrieve("legs", "Which topic has value 105?", options)
    assert lookups == ["legs", "legs"]


def test_no_legs_make_no_hand_over() -> None:
    assert legs.run([]) == [] and legs.start([]).done()
