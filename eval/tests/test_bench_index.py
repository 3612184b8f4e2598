"""eval.bench_index: the embedder-alone reference embeds exactly the texts the pipeline embedded."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from eval import bench_index

TOPICS = [
    "The boiler pressure valve opens at twelve bar and the relief line drains to the sump.",
    "Annual leave accrues monthly, and unused days carry over until the end of March.",
    "The QUIC handshake derives packet protection keys from the TLS secrets of each epoch.",
    "Invoices are approved by the finance controller before the payment run on Fridays.",
]


def _corpus(folder: Path) -> Path:
    """Short paragraphs that change topic often, so the chunker adds vector-only topic windows."""
    folder.mkdir()
    paragraphs = [" ".join([TOPICS[i % 4]] * (2 + i % 3)) for i in range(24)]
    (folder / "mixed.txt").write_text("\n\n".join(paragraphs), encoding="utf-8")
    return folder


def test_the_reference_embeds_every_window_the_pipeline_embedded(tmp_path: Path, settings) -> None:  # type: ignore[no-untyped-def]
    from rag_system.chunking.parts import chunk_file
    from rag_system.indexing.builder import chunker_options
    from rag_system.embedding.lazy import build_embedder
    from rag_system.ingestion import convert

    folder = _corpus(tmp_path / "docs")
    embedder = build_embedder(settings)
    chunks, _ = chunk_file(convert(folder / "mixed.txt", settings), "doc", embedder.count_tokens_batch,
                           chunker_options(settings, embedder))
    embedded = sum(len(c.windows or (c.text,)) for c in chunks)
    assert sum(c.vector_only_windows for c in chunks) > 0  # the case a window-table reference missed

    result = bench_index.run(argparse.Namespace(docs=folder, data_dir=tmp_path, embedder="minilm", set=[],
                                                repeat=2, json=True))
    assert result["chunks"] == len(chunks) and result["windows"] == embedded
    assert len(result["pipeline_runs_seconds"]) == 2 == len(result["embedder_windows_runs_seconds"])
    assert result["pipeline_seconds"] == min(result["pipeline_runs_seconds"])
    windows_alone = min(result[k] for k in result if k.startswith("embedder_windows_seconds_batch_"))
    assert result["window_ratio"] == pytest.approx(windows_alone / result["pipeline_seconds"], rel=0.05)  # rounded
    assert 0 < result["cpu_window_ratio"] and result["pipeline_peak_rss_mb"] <= result["peak_rss_mb"]
