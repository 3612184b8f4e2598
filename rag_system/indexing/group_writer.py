"""A group of prepared files: embedded in one call, then written file by file.

Embedding several small files together lets the embedder sort all their
texts by length and fill its batches; each document is still written in its
own commit per table, then recorded in the manifest, so the crash-safety
argument of `rag_system/indexing/builder.py` is unchanged. The builder runs
`embed` on its own thread and `write` on the write thread
(`build_stages.Behind`), so one group is written while the next embeds.

Writes append when no table holds a row of the group's documents (a first
build, new files): a merge (`merge_insert`) that replaces nothing cost
twice an append's time and three times its CPU. A document left half
written by a crash is found by the same check, and replaced as before.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

import numpy as np

from rag_system.chunking.chunk import Chunk
from rag_system.chunking.chunker import ChunkerOptions
from rag_system.embedding.base import Embedder
from rag_system.indexing.build_progress import EmbeddingReport
from rag_system.indexing.events import BuildEvent, BuildSummary, EventSink
from rag_system.indexing.manifest import FileRecord, Manifest
from rag_system.indexing.sql import documents_where

if TYPE_CHECKING:
    from rag_system.indexing.store import ChunkTable

#: Builds embed at most this many texts per call so progress moves under load; measured on 2 shared cores
#: (load 3.7, passive OpenMP waits), MiniLM embeds 90-105 windows/s at batches of 8, 16 or 32 alike.
PROGRESS_BATCH = 16

Embedded = tuple[np.ndarray, "list[np.ndarray] | None"]


def chunk_vectors(chunks: Sequence[Chunk], flat: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """Split window vectors back per chunk; each chunk's own vector is their normalised mean."""
    windows: list[np.ndarray] = []
    offset = 0
    for chunk in chunks:
        n = len(chunk.windows) or 1
        windows.append(flat[offset:offset + n])
        offset += n
    means = np.stack([w.mean(axis=0) for w in windows]) if windows else flat[:0]
    norms = np.linalg.norm(means, axis=1, keepdims=True)
    return (means / np.maximum(norms, 1e-12)).astype(np.float32), windows


def embed_group(embedder: Embedder, options: ChunkerOptions, group: Sequence[Any], on_event: EventSink) -> Embedded:
    """A group of prepared files' chunk vectors and, with windows, each chunk's window vectors, in one
    embedder call (its texts sorted by length across the files). Failed and held files contribute none.
    A distributed build's tasks call it too (rag_system/indexing/ray_tasks.py): the same vectors."""
    ready = [p for p in group if p.document is not None]
    chunks = [c for p in ready for c in p.chunks]
    windowed = bool(options.window_tokens)
    texts = [t for c in chunks for t in (c.windows or (c.text,))] if windowed else [c.text for c in chunks]
    flat = embedder.embed(texts, EmbeddingReport(ready, windowed, on_event), PROGRESS_BATCH)
    return chunk_vectors(chunks, flat) if windowed else (flat, None)


def file_record(prepared: Any, chunker_version: str, embedding_model: str) -> FileRecord:
    """The manifest row of a prepared (converted and chunked) file, stamped now."""
    document, source = prepared.document, prepared.source
    return FileRecord(
        path=source.key, document_id=source.document_id, document_name=document.name,
        file_type=document.file_type, size=source.size, pages=document.page_count,
        chunks=len(prepared.chunks), chunker_version=chunker_version, embedding_model=embedding_model,
        ocr_engine=document.ocr_engine or "", indexed_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
    )


def shared_elsewhere(document_id: str, path: str, records: dict[str, FileRecord]) -> bool:
    """Whether another indexed path has the same content (its rows must stay)."""
    return any(r.document_id == document_id and p != path for p, r in records.items())


def stale_ids(prepared: Any, records: dict[str, FileRecord]) -> list[str]:
    """The document ids a file's new rows replace: its own, and its previous version's unless another
    indexed path still has that content."""
    stale = {prepared.source.document_id}
    previous = prepared.previous
    if previous is not None and not shared_elsewhere(previous.document_id, prepared.source.key, records):
        stale.add(previous.document_id)
    return sorted(stale)


def holds_any(table: ChunkTable, document_ids: Sequence[str]) -> bool:
    """Whether any of the index's tables has a row of these documents (or of their parts).

    All three are asked: a crash between the window rows' commit and the chunk rows' leaves rows
    in the first tables only, and such a document must be replaced, not appended twice.
    """
    if not document_ids:
        return False
    where = documents_where(document_ids)
    tables = [table.table, *(side.table for side in (table.windows, table.vectors) if side is not None)]
    return any(t.count_rows(where) for t in tables)


@dataclass
class GroupWriter:
    """Embeds a group of prepared files (`prepare.Prepared`) and writes them; `timings` gets
    `embed` from the embedding thread and `write` from the write thread (different keys)."""

    table: ChunkTable
    manifest: Manifest
    embedder: Embedder
    options: ChunkerOptions
    summary: BuildSummary
    timings: dict[str, float]
    on_event: EventSink
    records: dict[str, FileRecord]

    def embed(self, group: Sequence[Any]) -> Embedded:
        """The group's chunk vectors and, with windows, each chunk's window vectors."""
        t0 = time.perf_counter()
        embedded = embed_group(self.embedder, self.options, group, self.on_event)
        self.timings["embed"] += time.perf_counter() - t0
        return embedded

    def write(self, group: Sequence[Any], vectors: np.ndarray, windows: list[np.ndarray] | None) -> None:
        """Each file's rows in its own commits, in order; appended when no table holds its documents."""
        t0 = time.perf_counter()
        stale = {id(p): stale_ids(p, self.records) for p in group if p.document is not None}
        append = not holds_any(self.table, sorted({i for ids in stale.values() for i in ids}))
        self.timings["write"] += time.perf_counter() - t0
        offset = 0
        for prepared in group:
            if prepared.held:
                self.summary.held.append(prepared.source.key)
                continue
            if prepared.document is None:
                path = prepared.source.key
                self.summary.failed.append({"path": path, "reason": prepared.error or "unknown error"})
                self.on_event(BuildEvent("file_failed", path, {"reason": prepared.error}))
                continue
            count = len(prepared.chunks)
            self.on_event(BuildEvent("file_embedded", prepared.source.key, {"chunks": count}))
            self._write(prepared, [] if append else stale[id(prepared)], vectors[offset:offset + count],
                        None if windows is None else windows[offset:offset + count])
            offset += count

    def _write(self, prepared: Any, replacing: list[str], vectors: np.ndarray,
               windows: list[np.ndarray] | None) -> None:
        """Replace (or append) the file's rows, one commit per table, then record its manifest row."""
        document = prepared.document
        source, path = prepared.source, prepared.source.key
        previous = prepared.previous
        t0 = time.perf_counter()
        self.table.add_chunks(source.document_id, document.name, prepared.chunks, vectors, windows,
                              replacing=replacing, part_ids=prepared.document_ids or None)
        self.manifest.upsert(file_record(prepared, self.options.version, self.embedder.identity.model_id))
        self.timings["write"] += time.perf_counter() - t0
        summary = self.summary
        if previous is None:
            summary.added += 1
        else:
            summary.updated += 1
        summary.chunks += len(prepared.chunks)
        summary.pages += document.page_count
        summary.ocr_pages += len(document.ocr_pages)
        if document.ocr_engine and document.ocr_engine not in summary.ocr_engines:
            summary.ocr_engines.append(document.ocr_engine)
        self.on_event(BuildEvent("file_written", path, {
            "chunks": len(prepared.chunks), "pages": document.page_count,
            "status": "updated" if previous else "added",
        }))
