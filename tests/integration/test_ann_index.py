"""The ANN index: built by the build that crosses `ANN_MIN_CHUNKS`, kept current by later builds, searched re-scored."""

from __future__ import annotations

from pathlib import Path

from rag_system.indexing.builder import build_index
from rag_system.indexing.store import ChunkTable, connect
from rag_system.retrieval.engine import RetrievalEngine
TOPICS = {
    "bread.txt": "Sourdough bread rises because wild yeast and lactic bacteria ferment the dough overnight.",
    "volcano.txt": "A volcano erupts when magma pressure in the chamber exceeds the strength of the rock above.",
    "chess.txt": "In chess the king castles by moving two squares towards a rook, which jumps over it.",
    "tides.txt": "Ocean tides follow the moon: its gravity raises a bulge of water on the near and far side.",
    "bees.txt": "Honey bees tell each other where flowers are with a waggle dance inside the hive.",
    "glacier.txt": "Glaciers carve U-shaped valleys as compacted snow turns to ice and slowly flows downhill.",
}


def write_topics(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in TOPICS.items():
        (folder / name).write_text(f"{text}\n\n{text.split(':')[0]}, as field notes describe at length.")


def top_document(engine: RetrievalEngine, index: str, query: str, mode: str) -> str:
    result = engine.retrieve(index, query, engine.options(mode=mode, k=5))
    return result.candidates[0].document_name


def test_ann_index_is_built_past_the_threshold_and_kept_current(tmp_path: Path, settings, embedder) -> None:  # type: ignore[no-untyped-def]
    write_topics(tmp_path / "docs")
    small = build_index([tmp_path / "docs"], "t", settings.with_overrides(ann_min_chunks=1000), embedder=embedder)
    table = ChunkTable.open(connect(settings.resolved_lancedb_uri), "t")
    assert not table.has_ann_index() and "ann" not in small.timings  # below the threshold: exact search

    crossing = settings.with_overrides(ann_min_chunks=small.index_chunks)
    again = build_index([tmp_path / "docs"], "t", crossing, embedder=embedder)
    table = ChunkTable.open(connect(settings.resolved_lancedb_uri), "t")
    assert again.unchanged == 6 and "ann" in again.timings and table.has_ann_index()
    engine = RetrievalEngine(crossing, embedder)
    for mode in ("vector_only", "hybrid"):
        assert top_document(engine, "t", "How do bees show each other where the flowers are?", mode) == "bees.txt"
        assert top_document(engine, "t", "What makes a volcano erupt?", mode) == "volcano.txt"

    (tmp_path / "docs" / "zebra.txt").write_text(
        "Zebras graze on the savanna in large herds.\n\nTheir stripes confuse biting flies.")
    grown = build_index([tmp_path / "docs"], "t", crossing, embedder=embedder)
    assert grown.added == 1 and "ann" not in grown.timings  # kept, not rebuilt
    engine.forget("t")
    assert top_document(engine, "t", "Where do zebras graze?", "vector_only") == "zebra.txt"
    assert ChunkTable.open(connect(settings.resolved_lancedb_uri), "t").has_ann_index()
