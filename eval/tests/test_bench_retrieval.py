"""The latency bench's replication keeps the windowed layout whole: every copy has its chunk's windows."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from eval.bench_retrieval import replicate
from rag_system.indexing.builder import build_index
from rag_system.indexing.store import ChunkTable, connect
from rag_system.retrieval.engine import RetrievalEngine


def test_replicated_windowed_table_is_searchable_by_both_legs(tmp_path: Path, embedder) -> None:  # type: ignore[no-untyped-def]
    from rag_system.config import load_settings

    topics = ["penguins huddle together to survive the antarctic winter",
              "sourdough bread needs a lively starter and a long proof",
              "the violin has four strings tuned in perfect fifths"]
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "long.txt").write_text("\n\n".join(f"Paragraph {i}: {topics[i % 3]}, fact {i}." for i in range(24)))
    settings = load_settings(environ={"DOCENT_DATA_DIR": str(tmp_path / "data")}, dotenv_path=None)
    settings = settings.with_overrides(chunk_window_tokens=48, chunk_tokens=128)
    build_index([folder], "src", settings, embedder=embedder)
    source = RetrievalEngine(settings, embedder).table("src")
    chunks, windows = source.table.to_arrow(), source.windows.table.to_arrow()
    assert 1 < chunks.num_rows < windows.num_rows

    target = 2 * chunks.num_rows + 1  # two whole copies and the first chunk of a third
    big = ChunkTable.open_or_create(connect(settings.resolved_lancedb_uri), "big", embedder.identity, 48)
    replicate(big, chunks, windows, target)
    big.refresh_fts(stem=True, remove_stop_words=True, ascii_folding=True)

    assert big.count() == target
    per_source = Counter(windows.column("chunk_id").to_pylist())
    order = chunks.column("chunk_id").to_pylist()
    copied = Counter(big.windows.table.to_arrow().column("chunk_id").to_pylist())
    expected = {f"r{c:05d}-{i}": per_source[order[i]]
                for c in range(3) for i in range(chunks.num_rows if c < 2 else 1)}
    assert copied == expected  # each copy carries exactly its source chunk's windows

    engine = RetrievalEngine(settings, embedder)
    result = engine.retrieve("big", "how is a violin tuned", engine.options(k=6))
    assert {"fts", "fts_exact", "vector"} <= set(result.legs)
    assert result.legs["fts"] and result.legs["vector"]
    assert all("violin" in c.text for c in result.candidates[:3])
