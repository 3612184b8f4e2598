"""Re-embed an index with another embedder without reading its files again.

Why: an index keeps the embedder it was built with, and moving it to a
better one (MiniLM -> bge-small) should not need the original files, their
conversion or their OCR: the chunks and their windows' texts are in the
store. So `python -m rag_system reembed --index X --embedder Y` embeds each
chunk's window texts (the full-text windows from the window table, the
vector-only ones from the spans the chunk's metadata records,
rag_system/chunking/window_spans.py) with the new model and writes the rows
anew. Chunks, their ids, the full-text windows and the manifest's files stay
what they were (the two vocabularies of bge and MiniLM are the same, so the
chunk budgets hold; another tokenizer may count a window a little longer).

Crash-safe like a build: the new rows go to a staging table beside the index
(`idx_<index>__reembed`), one document per commit; a run that dies leaves the
index as it was and the next run goes on from the documents already staged
(documents that changed in the meantime are staged again). Only once every
document is staged is the index switched, in steps that each leave it
consistent: the window-vector rows are dropped (the vector leg then searches
the chunk table's own window vectors, still the old model's), the chunk
table is overwritten with the staged rows in one commit (new model id in its
schema, new vectors), the window-vector rows are written again from it, the
manifest records the new model, and the staging table goes. A run that dies
in between finishes the switch when run again.

The index must not be written meanwhile: a running RAG API that serves the
store is refused by the CLI (as `index` hands a build to it), since its open
handles would keep querying with the old model.
"""

from __future__ import annotations

import json
import logging
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rag_system.chunking.chunk import Chunk
from rag_system.chunking.window_spans import texts_of
from rag_system.embedding.base import Embedder
from rag_system.indexing.build_progress import BuildProgress
from rag_system.indexing.connection import open_store
from rag_system.indexing.group_writer import PROGRESS_BATCH, chunk_vectors
from rag_system.indexing.languages import fts_options
from rag_system.indexing.events import BuildEvent, EventSink, ignore_event
from rag_system.indexing.manifest import Manifest
from rag_system.indexing.store import (WINDOWS_COLUMN, ChunkTable, IndexNotFoundError, chunk_schema, sql_in,
                                       table_exists, table_name, validate_index_name)
from rag_system.indexing.window_vectors import VECTORS_SUFFIX

log = logging.getLogger(__name__)

STAGING_SUFFIX = "__reembed"
#: Documents embedded per call (their windows together), as a build embeds a group of files.
GROUP_CHUNKS = 256
_ROW_COLUMNS = ("chunk_id", "document_id", "document_name", "chunk_index", "page_start", "page_end",
                "heading_path", "block_type", "text", "metadata")


@dataclass
class ReembedSummary:
    index: str
    embedder: str
    model: str
    previous_model: str
    documents: int = 0  # staged by this run
    documents_kept: int = 0  # already staged by an interrupted run
    chunks: int = 0
    windows: int = 0
    windows_not_recorded: int = 0  # vector-only windows of chunks written before their spans were recorded
    switched: bool = False
    seconds: float = 0.0
    timings: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"index": self.index, "embedder": self.embedder, "model": self.model,
                "previous_model": self.previous_model, "documents": self.documents,
                "documents_kept": self.documents_kept, "chunks": self.chunks, "windows": self.windows,
                "windows_not_recorded": self.windows_not_recorded, "switched": self.switched,
                "seconds": round(self.seconds, 3), "timings_s": {k: round(v, 3) for k, v in self.timings.items()}}


def staging_name(index: str) -> str:
    return table_name(index) + STAGING_SUFFIX


def reembed_index(index: str, settings: Any, embedder: Embedder, on_event: EventSink = ignore_event,
                  stop_after: int | None = None) -> ReembedSummary:
    """Re-embed `index` with `embedder` (see the module docstring); with `stop_after`, return after staging
    that many documents, without switching (what an interrupted run leaves, for tests)."""
    started = time.perf_counter()
    validate_index_name(index)
    on_event = BuildProgress().sink(on_event)
    db = open_store(settings)
    if not table_exists(db, table_name(index)):
        raise IndexNotFoundError(f"index {index!r} does not exist")
    source = ChunkTable.open(db, index)
    previous, _ = source.recorded_identity()
    summary = ReembedSummary(index, embedder.name, embedder.identity.model_id, previous)
    staging = _staging(db, index, source, embedder)
    if previous != embedder.identity.model_id:
        done = _stage(source, staging, embedder, summary, on_event, stop_after)
        if not done:
            summary.seconds = time.perf_counter() - started
            return summary
        _switch_rows(db, index, staging)
    elif staging is None:
        log.info("index %s is already embedded with %s", index, previous)
        on_event(BuildEvent("build_started", data={"to_process": 0}))
    if staging is not None or previous != embedder.identity.model_id:
        t0 = time.perf_counter()
        _finish(db, index, settings, embedder.identity.model_id, on_event)
        summary.timings["switch"] = time.perf_counter() - t0
        summary.switched = True
    summary.seconds = time.perf_counter() - started
    on_event(BuildEvent("build_done", data=summary.to_json()))
    return summary


def _staging(db: Any, index: str, source: ChunkTable, embedder: Embedder) -> ChunkTable | None:
    """The staging table for `embedder` (made when missing; one staged for another model is dropped).
    None when the index already has `embedder`'s vectors and nothing is staged."""
    name = staging_name(index)
    if table_exists(db, name):
        staged = ChunkTable(db, index, db.open_table(name))
        if staged.recorded_identity()[0] == embedder.identity.model_id:
            return staged
        log.info("index %s: dropping rows staged for another model (%s)", index, staged.recorded_identity()[0])
        db.drop_table(name)
    if source.recorded_identity()[0] == embedder.identity.model_id:
        return None
    schema = chunk_schema(embedder.identity, source.window_tokens())
    return ChunkTable(db, index, db.create_table(name, schema=schema, exist_ok=True))


def _stage(source: ChunkTable, staging: ChunkTable | None, embedder: Embedder, summary: ReembedSummary,
           on_event: EventSink, stop_after: int | None) -> bool:
    """Stage every document of `source` not staged yet; whether all are staged (the switch may follow)."""
    assert staging is not None
    wanted = _ids(source.table)
    staged = _ids(staging.table)
    gone = staged - wanted  # replaced or removed by a build since the interrupted run
    if gone:
        staging.table.delete(sql_in("document_id", sorted(gone)))
    todo = sorted(wanted - staged)
    summary.documents_kept = len(staged & wanted)
    rows = _rows_by_document(source, todo)
    on_event(BuildEvent("build_started", data={"to_process": len(todo), "unchanged": summary.documents_kept}))
    windowed = WINDOWS_COLUMN in source.table.schema.names
    windows = _window_texts(source, todo) if windowed else {}
    timings = summary.timings
    group: list[str] = []
    size = 0
    for position, document_id in enumerate(todo, start=1):
        group.append(document_id)
        size += len(rows[document_id])
        last = position == len(todo) or (stop_after is not None and position >= stop_after)
        if size >= GROUP_CHUNKS or last:
            _stage_group(group, rows, windows, windowed, staging, embedder, summary, on_event, timings)
            group, size = [], 0
        if stop_after is not None and position >= stop_after:
            return False
    return True


def _ids(table: Any) -> set[str]:
    return set(table.to_arrow().select(["document_id"]).column("document_id").to_pylist())


def _rows_by_document(source: ChunkTable, document_ids: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
    """Each document's chunk rows (without vectors; with windows, `windows_stored`: how many), in order."""
    windowed = WINDOWS_COLUMN in source.table.schema.names
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for start in range(0, len(document_ids), 500):
        part = document_ids[start:start + 500]
        found = (source.table.search().where(sql_in("document_id", part))
                 .select([*_ROW_COLUMNS, *([WINDOWS_COLUMN] if windowed else [])]).limit(None).to_arrow())
        counts = pc.list_value_length(found.column(WINDOWS_COLUMN)).to_pylist() if windowed else None
        for i, row in enumerate(found.select(list(_ROW_COLUMNS)).to_pylist()):
            row["windows_stored"] = counts[i] if counts is not None else 1
            out[row["document_id"]].append(row)
    for rows in out.values():
        rows.sort(key=lambda r: r["chunk_index"])
    return out


def _window_texts(source: ChunkTable, document_ids: Sequence[str]) -> dict[str, list[str]]:
    """Each chunk's full-text windows' texts, in window order (a chunk of one window: its own text)."""
    assert source.windows is not None
    found: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for start in range(0, len(document_ids), 500):
        part = document_ids[start:start + 500]
        rows = (source.windows.table.search().where(sql_in("document_id", part))
                .select(["chunk_id", "window_index", "text"]).limit(None).to_list())
        for row in rows:
            found[row["chunk_id"]].append((row["window_index"], row["text"]))
    return {chunk_id: [text for _, text in sorted(pairs)] for chunk_id, pairs in found.items()}


def _chunk(row: dict[str, Any], windows: dict[str, list[str]], windowed: bool,
           summary: ReembedSummary) -> Chunk:
    """The stored row as the chunk a build would write, with every window a build would embed."""
    metadata = json.loads(row["metadata"] or "{}")
    texts: tuple[str, ...] = ()
    vector_only = 0
    if windowed:
        full_text = windows.get(row["chunk_id"]) or [row["text"]]
        extra = texts_of(row["text"], metadata)
        if extra is None:  # a chunk written before the spans were recorded: its full-text windows only
            extra = []
            summary.windows_not_recorded += max(int(row["windows_stored"] or 0) - len(full_text), 0)
        texts, vector_only = (*full_text, *extra), len(extra)
    return Chunk(chunk_id=row["chunk_id"], chunk_index=row["chunk_index"], text=row["text"],
                 page_start=row["page_start"], page_end=row["page_end"], heading_path=row["heading_path"] or "",
                 block_type=row["block_type"] or "", token_count=0, metadata=metadata, windows=texts,
                 vector_only_windows=vector_only)


def _stage_group(group: Sequence[str], rows: dict[str, list[dict[str, Any]]], windows: dict[str, list[str]],
                 windowed: bool, staging: ChunkTable, embedder: Embedder, summary: ReembedSummary,
                 on_event: EventSink, timings: dict[str, float]) -> None:
    """Embed a group of documents' windows in one call, then stage each document in one commit."""
    chunks = {d: [_chunk(r, windows, windowed, summary) for r in rows[d]] for d in group}
    for document_id in group:
        on_event(BuildEvent("file_chunked", document_id, {"chunks": len(chunks[document_id])}))
    every = [c for d in group for c in chunks[d]]
    texts = [t for c in every for t in (c.windows or (c.text,))] if windowed else [c.text for c in every]
    owner = [d for d in group for c in chunks[d] for _ in (c.windows or (c.text,) if windowed else (c.text,))]
    done: dict[str, int] = defaultdict(int)

    def progress(positions: list[int]) -> None:
        for i in positions:
            done[owner[i]] += 1
        for d in {owner[i] for i in positions}:
            on_event(BuildEvent("file_embedding", d, {"chunks_done": len(chunks[d]) * done[d] // max(
                sum(1 for o in owner if o == d), 1), "chunks": len(chunks[d])}))

    t0 = time.perf_counter()
    flat = embedder.embed(texts, progress, PROGRESS_BATCH) if texts else np.zeros((0, embedder.dimension))
    vectors, per_chunk = chunk_vectors(every, flat) if windowed else (flat, None)
    timings["embed"] = timings.get("embed", 0.0) + time.perf_counter() - t0
    t0 = time.perf_counter()
    offset = 0
    for document_id in group:
        mine = chunks[document_id]
        count = len(mine)
        staging.add_chunks(document_id, rows[document_id][0]["document_name"], mine, vectors[offset:offset + count],
                           None if per_chunk is None else per_chunk[offset:offset + count])
        offset += count
        summary.documents += 1
        summary.chunks += count
        on_event(BuildEvent("file_written", document_id, {"chunks": count, "status": "reembedded"}))
    summary.windows += len(texts)
    timings["write"] = timings.get("write", 0.0) + time.perf_counter() - t0


def _switch_rows(db: Any, index: str, staging: ChunkTable | None) -> None:
    """The index's rows become the staged ones, each step leaving it consistent (module docstring)."""
    assert staging is not None
    name = table_name(index)
    if table_exists(db, name + VECTORS_SUFFIX):
        db.drop_table(name + VECTORS_SUFFIX)  # the vector leg falls back to the chunk table's own vectors
    data = staging.table.to_arrow()
    db.create_table(name, data=data, schema=data.schema, mode="overwrite")


def _finish(db: Any, index: str, settings: Any, model_id: str, on_event: EventSink) -> None:
    """After the rows switched: the window-vector rows again, the indexes, the manifest, no staging table."""
    table = ChunkTable.open(db, index)
    on_event(BuildEvent("fts_refreshed", data={"index": index}))
    # Writes the window-vector rows from the chunk table (`ensure_vectors`), the scalar indexes, compaction.
    table.refresh_fts(**fts_options(settings, table.sample_texts()), keep_versions_s=settings.keep_versions_s)
    table.refresh_ann(settings.ann_min_chunks)
    manifest = Manifest.open_existing(db, index)
    if manifest is not None:
        records = manifest.table.to_arrow()
        if records.num_rows:
            models = pa.array([model_id] * records.num_rows, pa.string())
            updated = records.set_column(records.schema.get_field_index("embedding_model"), "embedding_model",
                                         models)
            manifest.table.merge_insert("path").when_matched_update_all().execute(updated)
    if table_exists(db, staging_name(index)):
        db.drop_table(staging_name(index))
