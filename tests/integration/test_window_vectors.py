"""The window vector rows the vector leg searches: written, replaced and deleted with their chunks,
ranked as the chunk table's multivector MaxSim ranks, and added to an index that predates them."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from rag_system.indexing.builder import build_index
from rag_system.indexing.store import WINDOWS_COLUMN, ChunkTable, connect, table_name
from rag_system.indexing.window_vectors import VECTORS_SUFFIX
from rag_system.retrieval import legs
from rag_system.retrieval.engine import RetrievalEngine
from rag_system.retrieval.first_stage import ANN_REFINE_FACTOR
from testkit.leg_references import vector_chunks
from tests.integration.test_index_build import write_corpus

QUESTIONS = ("What is the value of fact 1.4 about topic2?", "Which topic has value 105?",
             "paragraph 2 of document 0")


def windowed(settings):  # type: ignore[no-untyped-def]
    return settings.with_overrides(chunk_tokens=200, chunk_window_tokens=64)


def multivector_rows(table: ChunkTable) -> dict[tuple[str, int], np.ndarray]:
    data = table.table.to_arrow().select(["chunk_id", WINDOWS_COLUMN]).to_pylist()
    return {(row["chunk_id"], i): np.array(v) for row in data for i, v in enumerate(row[WINDOWS_COLUMN])}


def vector_leg(engine: RetrievalEngine, table: ChunkTable, question: str) -> list[tuple[str, float]]:
    vector = engine.embedder.embed_queries([question])[0]
    [ranking] = legs.run([legs.vector_leg(table, vector, None, 10, ANN_REFINE_FACTOR)])
    return [(chunk_id, 1.0 - similarity) for chunk_id, similarity in zip(ranking.ids, ranking.scores)]


def test_window_vectors_follow_their_chunks_and_rank_as_the_multivector_does(
        tmp_path: Path, settings, embedder) -> None:  # type: ignore[no-untyped-def]
    paths = write_corpus(tmp_path / "docs", 3, sentences=30)
    config = windowed(settings)
    build_index([tmp_path / "docs"], "wv", config, embedder=embedder)
    table = ChunkTable.open(connect(settings.resolved_lancedb_uri), "wv")
    assert table.vectors is not None
    rows = table.vectors.table.to_arrow().to_pylist()
    expected = multivector_rows(table)
    assert len(rows) == len(expected) > table.count()  # one row per window, several per chunk
    for row in rows:
        assert np.allclose(row["vector"], expected[(row["chunk_id"], row["window_index"])], atol=1e-6)

    # Exact search on both layouts: the same chunks in the same order, at the same distances.
    engine = RetrievalEngine(config, embedder)
    for question in QUESTIONS:
        flat = vector_leg(engine, table, question)
        multi = vector_leg(engine, ChunkTable(table.db, "wv", table.table, table.windows, None), question)
        assert [c for c, _ in flat] == [c for c, _ in multi]
        assert np.allclose([d for _, d in flat], [d for _, d in multi], atol=1e-5)

    # A changed file's rows are replaced, a removed file's deleted, together with its chunks.
    paths[0].write_text(paths[0].read_text() + "\n\nA new closing paragraph about glaciers and tides.")
    paths[1].unlink()
    build_index([tmp_path / "docs"], "wv", config, embedder=embedder)
    table = ChunkTable.open(connect(settings.resolved_lancedb_uri), "wv")
    assert table.vectors is not None
    expected = multivector_rows(table)
    keys = {(r["chunk_id"], r["window_index"]) for r in table.vectors.table.to_arrow().to_pylist()}
    assert keys == set(expected)


def test_an_index_without_window_vector_rows_still_searches_and_gains_them_on_its_next_build(
        tmp_path: Path, settings, embedder) -> None:  # type: ignore[no-untyped-def]
    write_corpus(tmp_path / "docs", 2, sentences=30)
    config = windowed(settings)
    build_index([tmp_path / "docs"], "old", config, embedder=embedder)
    db = connect(settings.resolved_lancedb_uri)
    before = ChunkTable.open(db, "old")
    assert before.vectors is not None
    count = before.vectors.table.count_rows()
    db.drop_table(table_name("old") + VECTORS_SUFFIX)  # as an index built before the table existed

    table = ChunkTable.open(connect(settings.resolved_lancedb_uri), "old")
    assert table.vectors is None and table.lacks_vectors()
    engine = RetrievalEngine(config, embedder)
    fallback = engine.retrieve("old", QUESTIONS[0], engine.options(mode="vector_only", k=5))
    assert fallback.candidates

    again = build_index([tmp_path / "docs"], "old", config, embedder=embedder)
    assert again.unchanged == 2 and again.added == 0
    table = ChunkTable.open(connect(settings.resolved_lancedb_uri), "old")
    assert table.vectors is not None and not table.lacks_vectors()
    assert table.vectors.table.count_rows() == count
    engine.forget("old")
    gained = engine.retrieve("old", QUESTIONS[0], engine.options(mode="vector_only", k=5))
    assert [c.chunk_id for c in gained.candidates] == [c.chunk_id for c in fallback.candidates]


def test_the_ann_index_is_hnsw_up_to_its_window_limit_and_ivf_pq_past_it(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import pyarrow as pa

    from rag_system.indexing import window_vectors
    from rag_system.indexing.window_vectors import WindowVectorTable, vector_schema

    rng = np.random.default_rng(5)
    vectors = rng.standard_normal((600, 32)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    rows = pa.table({
        "chunk_id": [f"c{i // 3}" for i in range(600)], "document_id": ["d"] * 600, "document_name": ["d.md"] * 600,
        "chunk_index": pa.array([i // 3 for i in range(600)], pa.int32()),
        "page_start": pa.array([1] * 600, pa.int32()), "page_end": pa.array([1] * 600, pa.int32()),
        "block_type": ["paragraph"] * 600, "window_index": pa.array([i % 3 for i in range(600)], pa.int32()),
        "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1)), 32),
    }, schema=vector_schema(32))
    db = connect(str(tmp_path / "db"))
    for limit, kind, lance_kind in ((10_000, "IVF_HNSW_SQ", "IvfHnswSq"), (500, "IVF_PQ", "IvfPq")):
        monkeypatch.setattr(window_vectors, "HNSW_MAX_WINDOWS", limit)
        table = WindowVectorTable(db.create_table(f"v{limit}", data=rows))
        assert not table.has_ann_index() and table.create_ann_index() == kind
        table = WindowVectorTable(db.open_table(f"v{limit}"))
        assert table.ann_kind() == lance_kind
        hits = vector_chunks(table, vectors[3 * 17 + 1], None, 5)  # chunk 17's second window
        assert hits[0][0] == "c17" and hits[0][1] < 0.05 and len({c for c, _ in hits}) == 5
