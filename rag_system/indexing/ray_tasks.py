"""One task of a distributed build, as a Ray worker runs it: files in, uncommitted Lance fragments out.

Why the work is split this way (rag_system/indexing/distributed.py has the driver's side):
a task converts, chunks and embeds its files with exactly the code of the
single-process build (`prepare_file`, `embed_group`, the row builders of the
three tables), so both make the same chunk ids and rows; it writes those rows
as Lance fragments straight into the tables' folders (`lance.fragment.write_fragments`),
which makes them files that no table version references yet; and it hands the
driver only their metadata, the manifest rows and the per-file events. Nothing a
task does is visible to a reader until the driver commits, so a task that fails
or a worker that dies leaves the index as it was (its files are orphans that a
later compaction's cleanup removes).

Each worker process loads the index's embedder once (`_embedder`): Ray reuses a
worker process for the tasks of the same function, so later tasks find it loaded.
Nothing here imports Ray; the driver wraps `run_task` as a remote function.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from rag_system.chunking.chunker import ChunkerOptions
from rag_system.config import Settings
from rag_system.embedding.base import Embedder, EmbedderIdentity
from rag_system.indexing.build_stages import EMBED_GROUP_CHUNKS, Ahead, short_switch_interval
from rag_system.indexing.events import BuildEvent
from rag_system.indexing.group_writer import embed_group, file_record
from rag_system.indexing.manifest import FileRecord
from rag_system.indexing.plan import SourceFile
from rag_system.indexing.prepare import Prepared, prepare_file
from rag_system.indexing.store import chunk_rows
from rag_system.indexing.window_vectors import vector_rows
from rag_system.indexing.windows import window_rows

#: The tables a task writes, in the order the driver commits them: the side tables before the chunks
#: (as `ChunkTable.add_chunks` writes them), so a crash between commits leaves orphan side rows, which a
#: re-run deletes with the document, never chunks without their windows.
CHUNKS, WINDOWS, VECTORS = "chunks", "windows", "vectors"
COMMIT_ORDER = (WINDOWS, VECTORS, CHUNKS)

#: A task writes its buffered rows as fragments once they reach this many chunks (and at its end):
#: bounded memory per worker, and few enough fragments that the commit and the compaction stay cheap.
FRAGMENT_CHUNKS = 4096


@dataclass(frozen=True)
class TableTarget:
    """Where a task writes one table's fragments: the table's dataset URI, schema and file format version."""

    table: str  # CHUNKS, WINDOWS or VECTORS
    uri: str
    schema: pa.Schema
    data_storage_version: str


@dataclass(frozen=True)
class TaskSpec:
    """What every task of one build shares (sent to the cluster once)."""

    settings: Settings  # the embedder's name and thread count already set (`embedder_settings`)
    identity: EmbedderIdentity  # the index's embedder, as the driver chose it: a worker must load the same
    options: ChunkerOptions
    targets: tuple[TableTarget, ...]
    storage_options: dict[str, str] | None = None


@dataclass(frozen=True)
class FileJob:
    """One file of a task: what the plan says about it and its (size, mtime) when it was hashed."""

    source: SourceFile
    previous: FileRecord | None
    stamp: tuple[int, int] | None


@dataclass(frozen=True)
class FileOutcome:
    """What became of one file: `added`/`updated` (rows written as fragments), `failed` or `held`."""

    path: str
    status: str
    reason: str | None = None
    chunks: int = 0
    pages: int = 0
    ocr_pages: int = 0
    ocr_engine: str = ""


@dataclass
class TaskResult:
    """A finished task: its uncommitted fragments per table, manifest rows, outcomes and events in order."""

    task: int
    worker: str
    fragments: dict[str, list[Any]] = field(default_factory=dict)  # table -> lance FragmentMetadata
    rows: dict[str, int] = field(default_factory=dict)
    records: list[FileRecord] = field(default_factory=list)
    outcomes: list[FileOutcome] = field(default_factory=list)
    events: list[BuildEvent] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)


def embedder_settings(settings: Settings, embedder_name: str, threads: int) -> Settings:
    """The settings a worker builds the index's embedder from: its registry name, and `threads` compute
    threads (0: the library's default) unless DOCENT_TORCH_THREADS sets them."""
    overrides: dict[str, Any] = {}
    if settings.embedder != embedder_name:
        overrides["embedder"] = embedder_name
    if threads > 0 and settings.torch_threads <= 0:
        overrides["torch_threads"] = threads
    return settings.with_overrides(**overrides) if overrides else settings


_embedders: dict[str, Embedder] = {}


def _embedder(spec: TaskSpec) -> Embedder:
    """The worker process's embedder for these settings, built (and loaded) on its first task only."""
    from rag_system.embedding.lazy import build_embedder

    key = repr(spec.settings)
    embedder = _embedders.get(key)
    if embedder is None:
        embedder = _embedders[key] = build_embedder(spec.settings)
    if embedder.identity != spec.identity:
        raise RuntimeError(f"this worker's embedder is {embedder.identity}, the index's is {spec.identity}: "
                           "give every node of the cluster the same models")
    return embedder


class _Rows:
    """One task's rows per table, written as fragments every FRAGMENT_CHUNKS chunks."""

    def __init__(self, spec: TaskSpec, result: TaskResult) -> None:
        self.spec = spec
        self.result = result
        self.pending: dict[str, list[pa.Table]] = {t.table: [] for t in spec.targets}
        self.chunks = 0

    def add(self, table: str, rows: pa.Table) -> None:
        if table in self.pending and rows.num_rows:
            self.pending[table].append(rows)
            self.chunks += rows.num_rows if table == CHUNKS else 0

    def flush(self) -> None:
        import lance

        t0 = time.perf_counter()
        for target in self.spec.targets:
            parts = self.pending[target.table]
            if not parts:
                continue
            data = pa.concat_tables(parts)
            written = lance.fragment.write_fragments(
                data, target.uri, schema=target.schema, mode="append",
                data_storage_version=target.data_storage_version, storage_options=self.spec.storage_options)
            self.result.fragments.setdefault(target.table, []).extend(written)
            self.result.rows[target.table] = self.result.rows.get(target.table, 0) + data.num_rows
            parts.clear()
        self.chunks = 0
        self.result.timings["write"] = self.result.timings.get("write", 0.0) + time.perf_counter() - t0


def run_task(spec: TaskSpec, task: int, jobs: Sequence[FileJob]) -> TaskResult:
    """Convert, chunk and embed `jobs` in order and write their rows as uncommitted fragments.

    A file that cannot be read fails on its own (an outcome with its reason, as in a single-process
    build); anything else raises, and the driver then commits nothing.
    """
    result = TaskResult(task=task, worker=f"{socket.gethostname()}:{os.getpid()}",
                        timings={"convert": 0.0, "embed": 0.0, "write": 0.0})
    embedder = _embedder(spec)
    settings, options = spec.settings, spec.options
    schemas = {t.table: t.schema for t in spec.targets}
    rows = _Rows(spec, result)

    def collect(event: BuildEvent) -> None:
        if event.type != "file_embedding":  # per-batch counts: the driver sees the task's end only
            result.events.append(event)

    def prepare(job: FileJob) -> Prepared:
        return prepare_file(job.source, job.previous, settings, embedder, options, collect, None, job.stamp)

    with short_switch_interval(), Ahead(list(jobs), prepare) as ahead:
        for group in ahead.groups(EMBED_GROUP_CHUNKS):
            result.timings["convert"] += sum(p.seconds for p in group)
            t0 = time.perf_counter()
            vectors, windows = embed_group(embedder, options, group, collect)
            result.timings["embed"] += time.perf_counter() - t0
            offset = 0
            for prepared in group:
                count = len(prepared.chunks)
                if prepared.document is not None:
                    _add_file(prepared, vectors[offset:offset + count],
                              None if windows is None else windows[offset:offset + count], schemas, rows)
                    result.records.append(file_record(prepared, options.version, spec.identity.model_id))
                    collect(BuildEvent("file_embedded", prepared.source.key, {"chunks": count}))
                    offset += count
                result.outcomes.append(_outcome(prepared))
                if prepared.document is None and not prepared.held:
                    collect(BuildEvent("file_failed", prepared.source.key, {"reason": prepared.error}))
            if rows.chunks >= FRAGMENT_CHUNKS:
                rows.flush()
    rows.flush()
    return result


def _add_file(prepared: Prepared, vectors: Any, windows: list[Any] | None, schemas: dict[str, pa.Schema],
              rows: _Rows) -> None:
    """One file's rows of each table the index has, as `ChunkTable.add_chunks` would write them."""
    document, source = prepared.document, prepared.source
    assert document is not None
    data, ids = chunk_rows(schemas[CHUNKS], source.document_id, document.name, prepared.chunks, vectors, windows,
                           prepared.document_ids or None)
    rows.add(CHUNKS, data)
    if WINDOWS in schemas:
        rows.add(WINDOWS, window_rows(ids, document.name, prepared.chunks))
    if VECTORS in schemas and windows is not None:
        rows.add(VECTORS, vector_rows(schemas[VECTORS], ids, document.name, prepared.chunks, windows))


def _outcome(prepared: Prepared) -> FileOutcome:
    path = prepared.source.key
    if prepared.held:
        return FileOutcome(path, "held")
    document = prepared.document
    if document is None:
        return FileOutcome(path, "failed", prepared.error or "unknown error")
    return FileOutcome(path, "updated" if prepared.previous is not None else "added", None, len(prepared.chunks),
                       document.page_count, len(document.ocr_pages), document.ocr_engine or "")
