"""Incremental index build: files -> pages -> chunks -> vectors -> LanceDB.

Order of writes per document (why a crash never leaves half a document):
1. replace the rows of the document's old and new content ids by all of its
   chunks, in one commit per table (windows, then chunks): a question asked
   meanwhile sees the old version or the new one, never neither or half,
2. record it in the manifest.
A crash before 2 leaves the manifest stale, so the next run redoes that file.

Conversion and chunking of the next file run in a background thread while
the current file is embedded, because the embedder is the bottleneck.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from rag_system.chunking.chunker import Chunk, ChunkerOptions
from rag_system.chunking.parts import chunk_file
from rag_system.config import Settings
from rag_system.indexing.build_progress import BuildProgress, EmbeddingReport
from rag_system.indexing.e5 import E5Embedder
from rag_system.indexing.embedder import Embedder
from rag_system.indexing.embedders import choose_embedder
from rag_system.indexing.events import BuildEvent, BuildSummary, EventSink, ignore_event
from rag_system.indexing.languages import fts_options
from rag_system.indexing.lazy_embedder import LazyEmbedder
from rag_system.indexing.manifest import FileRecord, Manifest
from rag_system.indexing.plan import BuildPlan, SourceFile, discover, make_plan
from rag_system.indexing.store import ChunkTable, VectorLayoutMismatchError, open_store, validate_index_name
from rag_system.ingestion import convert, supported_extensions
from rag_system.ingestion.types import ConversionError, ConvertedDocument

log = logging.getLogger(__name__)


#: Files are embedded together until their chunks reach this many.
EMBED_GROUP_CHUNKS = 256
#: Builds embed at most this many texts per call so progress moves under load; measured on 2 shared cores
#: (load 3.7, passive OpenMP waits), MiniLM embeds 90-105 windows/s at batches of 8, 16 or 32 alike.
PROGRESS_BATCH = 16

AnyEmbedder = Embedder | LazyEmbedder | E5Embedder


class BuildCancelled(RuntimeError):
    """The caller asked the build to stop; completed documents are kept."""


@dataclass(frozen=True)
class _Prepared:
    source: SourceFile
    previous: FileRecord | None
    document: ConvertedDocument | None
    chunks: list[Chunk]
    error: str | None
    seconds: float
    document_ids: tuple[str, ...] = ()  # per chunk: the file's id, or its part's (a mailbox's message)
    held: bool = False  # written to while it was read: not indexed now (`_changed_since`)


def hash_files(paths: Sequence[Path]) -> list[str]:
    import docent_native

    return list(docent_native.sha256_files([str(p) for p in paths]))


def chunker_options(settings: Settings, embedder: AnyEmbedder) -> ChunkerOptions:
    budget = min(settings.chunk_tokens, embedder.max_content_tokens)
    # A window as large as the chunk would only repeat the chunk's own vector.
    windows = settings.chunk_window_tokens if settings.chunk_window_tokens < budget else 0
    return ChunkerOptions(max_tokens=budget, overlap_sentences=settings.chunk_overlap_sentences,
                          context=settings.chunk_context, window_tokens=windows,
                          pack_code=settings.chunk_pack_code, window_at_blocks=settings.chunk_window_at_blocks,
                          topic_breaks=settings.chunk_topic_breaks,
                          window_at_topics=settings.chunk_window_at_topics)


def build_index(
    inputs: Sequence[Path],
    index: str,
    settings: Settings,
    *,
    embedder: AnyEmbedder | None = None,
    embedder_name: str | None = None,
    on_event: EventSink = ignore_event,
    cancel: threading.Event | None = None,
    hold: frozenset[Path] = frozenset(),
    settle_s: float = 0.0,
) -> BuildSummary:
    """Bring index `index` in line with the files under `inputs`.

    The embedder is the index's own (`choose_embedder`); `embedder_name`
    chooses it for a new index and must match an existing one's. Without an
    `embedder`, the model loads only once a file needs embedding. `hold`: files left as they are
    indexed (still being written), and with `settle_s` every file modified within that time.
    """
    started = time.perf_counter()
    validate_index_name(index)
    on_event = BuildProgress().sink(on_event)
    files, skipped, roots = discover(inputs, supported_extensions())
    stamps = {f: _stamp(f) for f in files}  # before any byte is read: what the hash and the text must match
    if settle_s > 0:
        recent = time.time_ns() - int(settle_s * 1e9)
        hold = hold | {f for f, stamp in stamps.items() if stamp is None or stamp[1] > recent}
    held = [f for f in files if f in hold]  # still being written: indexed as they were, for now
    files = [f for f in files if f not in hold]
    db = open_store(settings)
    converted: dict[Path, ConvertedDocument] = {}  # files read to detect the language (EMBEDDER=auto)
    embedder = choose_embedder(db, index, settings, embedder, embedder_name,
                               sample=lambda: _language_sample(files, settings, converted))
    options = chunker_options(settings, embedder)
    summary = BuildSummary(index=index)
    sizes = [p.stat().st_size for p in files]
    hashes = hash_files(files)
    manifest = Manifest.open_or_create(db, index)
    records = manifest.records()
    try:
        table = ChunkTable.open_or_create(db, index, embedder.identity, options.window_tokens)
    except VectorLayoutMismatchError as exc:
        # Every file's chunker version changed with the layout, so all of them
        # are re-indexed below; the old rows cannot be mixed with the new ones.
        log.warning("%s; rebuilding", exc)
        table = ChunkTable.recreate(db, index, embedder.identity, options.window_tokens)
        manifest.remove(list(records))
        records = {}
    plan = make_plan(files, hashes, sizes, skipped, roots, records, options.version,
                     embedder.identity.model_id, held)
    _report_plan(plan, summary, on_event, records)

    for record in plan.removed:
        if not _shared_elsewhere(record.document_id, record.path, records):
            table.delete_documents([record.document_id])
        manifest.remove([record.path])
        summary.removed += 1
        on_event(BuildEvent("file_removed", record.path))

    timings = {"convert": 0.0, "embed": 0.0, "write": 0.0}
    work = plan.to_process
    writer = _Writer(table, manifest, embedder, options, summary, timings, on_event, records)
    group: list[_Prepared] = []
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="docent-convert") as pool:
        pending: Future[_Prepared] | None = None
        for i, (source, previous) in enumerate(work):
            current = pending or pool.submit(_prepare, source, previous, settings, embedder, options, on_event,
                                             converted, stamps.get(source.path))
            pending = None
            if i + 1 < len(work):
                nxt, nprev = work[i + 1]
                pending = pool.submit(_prepare, nxt, nprev, settings, embedder, options, on_event, converted,
                                      stamps.get(nxt.path))
            prepared = current.result()
            timings["convert"] += prepared.seconds
            if cancel is not None and cancel.is_set():
                raise BuildCancelled(f"build of {index!r} cancelled after {i} of {len(work)} files")
            group.append(prepared)
            if sum(len(p.chunks) for p in group) >= EMBED_GROUP_CHUNKS:
                writer.flush(group)
        writer.flush(group)

    t0 = time.perf_counter()
    changed = bool(summary.added or summary.updated or summary.removed)
    fts = fts_options(settings, table.sample_texts())
    # With nothing written and every full-text index current, there is nothing to refresh or compact.
    if changed or not table.fts_current(**fts):
        on_event(BuildEvent("fts_refreshed", data={"index": index}))
        table.refresh_fts(**fts, keep_versions_s=settings.keep_versions_s)
        manifest.compact(settings.keep_versions_s)
    timings["fts"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    if table.refresh_ann(settings.ann_min_chunks):
        timings["ann"] = time.perf_counter() - t0
    summary.index_chunks = table.count()
    summary.index_documents = len(manifest.records())
    summary.timings = timings
    summary.seconds = time.perf_counter() - started
    on_event(BuildEvent("build_done", data=summary.to_json()))
    return summary


def _chunk_vectors(chunks: Sequence[Chunk], flat: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
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


def _report_plan(plan: BuildPlan, summary: BuildSummary, on_event: EventSink,
                 records: dict[str, FileRecord]) -> None:
    summary.skipped = [str(p) for p in plan.skipped]
    on_event(BuildEvent("build_started", data={
        "to_process": len(plan.to_process), "unchanged": len(plan.unchanged),
        "removed": len(plan.removed), "skipped": len(plan.skipped),
        "bytes": sum(source.size for source, _ in plan.to_process),
    }))
    for source in plan.unchanged:
        summary.unchanged += 1
        # Its page and chunk counts from the manifest, so a job lists every file with its size in pages.
        known = records.get(str(source.path))
        counts = {"pages": known.pages, "chunks": known.chunks} if known is not None else {}
        on_event(BuildEvent("file_unchanged", str(source.path), counts))
    for source, owner in plan.duplicates:
        summary.duplicates.append({"path": str(source.path), "same_content_as": owner})
        on_event(BuildEvent("file_duplicate", str(source.path), {"same_content_as": owner}))


def _shared_elsewhere(document_id: str, path: str, records: dict[str, FileRecord]) -> bool:
    return any(r.document_id == document_id and p != path for p, r in records.items())


def _language_sample(files: Sequence[Path], settings: Settings, converted: dict[Path, ConvertedDocument],
                     limit: int = 3) -> list[str]:
    """Text of the first few convertible files (kept, so they are not converted twice)."""
    texts: list[str] = []
    for path in files[: limit * 2]:
        try:
            converted[path] = convert(path, settings)
        except ConversionError:
            continue
        texts.extend(b.text for b in converted[path].blocks[:200])
        if len(converted) >= limit:
            break
    return texts


def _stamp(path: Path) -> tuple[int, int] | None:
    """(size, mtime in ns), None for a file that is gone."""
    try:
        info = path.stat()
    except OSError:
        return None
    return info.st_size, info.st_mtime_ns


def _prepare(source: SourceFile, previous: FileRecord | None, settings: Settings,
             embedder: AnyEmbedder, options: ChunkerOptions, on_event: EventSink,
             converted: dict[Path, ConvertedDocument] | None = None,
             stamp: tuple[int, int] | None = None) -> _Prepared:
    """Convert and chunk one file; failures become a reason, never an exception.

    `stamp`: its (size, mtime) before its bytes were hashed. A file written to since is *held*, not
    indexed: hash and text may be of two versions, or of half of one (an editor writing in two steps,
    the second after the sync's settle check), and a reader would see half a document.
    """
    t0 = time.perf_counter()
    path = str(source.path)
    on_event(BuildEvent("file_started", path, {"size": source.size}))
    try:
        document = (converted or {}).pop(source.path, None) or convert(source.path, settings)
        on_event(BuildEvent("file_converted", path, {
            "pages": document.page_count, "blocks": len(document.blocks),
            "ocr_engine": document.ocr_engine, "ocr_pages": list(document.ocr_pages),
            "warnings": list(document.warnings),
        }))
        chunks, ids = chunk_file(document, source.document_id, embedder.count_tokens_batch, options)
        if not chunks:
            raise ConversionError(source.path, "no text found (the file has no extractable text)")
        if stamp is not None and _stamp(source.path) != stamp:
            on_event(BuildEvent("file_held", path, {"reason": "the file changed while it was read"}))
            return _Prepared(source, previous, None, [], None, time.perf_counter() - t0, held=True)
        on_event(BuildEvent("file_chunked", path, {"chunks": len(chunks)}))
        return _Prepared(source, previous, document, chunks, None, time.perf_counter() - t0, tuple(ids))
    except ConversionError as exc:
        reason = exc.reason
    except Exception as exc:  # a converter library failing on hostile input
        log.warning("conversion of %s failed unexpectedly", path, exc_info=True)
        reason = f"could not read the file ({type(exc).__name__}: {exc})"
    return _Prepared(source, previous, None, [], reason, time.perf_counter() - t0)


@dataclass
class _Writer:
    """Embeds a group of prepared files in one call, then writes them one by one.

    Embedding several small files together lets the embedder sort all their
    chunks by length and fill its batches; each document is still written in
    its own commit, so the crash-safety argument above is unchanged.
    """

    table: ChunkTable
    manifest: Manifest
    embedder: AnyEmbedder
    options: ChunkerOptions
    summary: BuildSummary
    timings: dict[str, float]
    on_event: EventSink
    records: dict[str, FileRecord]

    def flush(self, group: list[_Prepared]) -> None:
        ready = [p for p in group if p.document is not None]
        t0 = time.perf_counter()
        chunks = [c for p in ready for c in p.chunks]
        windowed = bool(self.options.window_tokens)
        texts = [t for c in chunks for t in (c.windows or (c.text,))] if windowed else [c.text for c in chunks]
        flat = self.embedder.embed(texts, EmbeddingReport(ready, windowed, self.on_event), PROGRESS_BATCH)
        vectors, windows = _chunk_vectors(chunks, flat) if windowed else (flat, None)
        self.timings["embed"] += time.perf_counter() - t0
        offset = 0
        for prepared in group:
            if prepared.held:
                self.summary.held.append(str(prepared.source.path))
                continue
            if prepared.document is None:
                path = str(prepared.source.path)
                self.summary.failed.append({"path": path, "reason": prepared.error or "unknown error"})
                self.on_event(BuildEvent("file_failed", path, {"reason": prepared.error}))
                continue
            count = len(prepared.chunks)
            self.on_event(BuildEvent("file_embedded", str(prepared.source.path), {"chunks": count}))
            self._write(prepared, prepared.document, vectors[offset:offset + count],
                        None if windows is None else windows[offset:offset + count])
            offset += count
        group.clear()

    def _write(self, prepared: _Prepared, document: ConvertedDocument, vectors: np.ndarray,
               windows: list[np.ndarray] | None) -> None:
        """Delete stale rows, append all chunks in one commit, then record the manifest row."""
        source, path = prepared.source, str(prepared.source.path)
        t0 = time.perf_counter()
        stale = [source.document_id]
        previous = prepared.previous
        if previous is not None and not _shared_elsewhere(previous.document_id, path, self.records):
            stale.append(previous.document_id)
        self.table.add_chunks(source.document_id, document.name, prepared.chunks, vectors, windows,
                              replacing=sorted(set(stale)), part_ids=prepared.document_ids or None)
        self.manifest.upsert(FileRecord(
            path=path, document_id=source.document_id, document_name=document.name,
            file_type=document.file_type, size=source.size, pages=document.page_count,
            chunks=len(prepared.chunks), chunker_version=self.options.version,
            embedding_model=self.embedder.identity.model_id, ocr_engine=document.ocr_engine or "",
            indexed_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        ))
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
