"""Incremental index build: files -> pages -> chunks -> vectors -> LanceDB.

Order of writes per document (why a crash never leaves half a document):
1. replace the rows of the document's old and new content ids by all of its
   chunks, in one commit per table (windows, then chunks): a question asked
   meanwhile sees the old version or the new one, never neither or half,
2. record it in the manifest.
A crash before 2 leaves the manifest stale, so the next run redoes that file.

The embedder is the bottleneck, so the rest runs beside it
(`build_stages.py`): files are converted and chunked ahead on one thread,
embedded a group at a time, and each group is written on another thread
while the next one embeds.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rag_system.chunking.chunker import ChunkerOptions
from rag_system.config import Settings
from rag_system.indexing.build_progress import BuildProgress
from rag_system.indexing.build_stages import EMBED_GROUP_CHUNKS, Ahead, Behind, short_switch_interval
from rag_system.embedding.base import Embedder
from rag_system.indexing.embedder_choice import choose_embedder
from rag_system.indexing.events import BuildEvent, BuildSummary, EventSink, ignore_event
from rag_system.indexing.group_writer import PROGRESS_BATCH, GroupWriter, shared_elsewhere
from rag_system.indexing.languages import fts_options
from rag_system.indexing.manifest import FileRecord, Manifest
from rag_system.indexing.objects import (ObjectListing, fetched, hash_objects, is_object_uri, list_objects,
                                         object_name)
from rag_system.indexing.plan import BuildPlan, SourceFile, discover, make_plan
from rag_system.indexing.prepare import Prepared, file_stamp, prepare_file
from rag_system.indexing.store import ChunkTable, VectorLayoutMismatchError, open_store, validate_index_name
from rag_system.ingestion import convert, supported_extensions
from rag_system.ingestion.types import ConversionError, ConvertedDocument

log = logging.getLogger(__name__)


__all__ = ["EMBED_GROUP_CHUNKS", "PROGRESS_BATCH", "BuildCancelled", "BuildSetup", "build_index", "chunker_options",
           "finish_build", "plan_build", "remove_gone"]


class BuildCancelled(RuntimeError):
    """The caller asked the build to stop; completed documents are kept."""


def hash_files(paths: Sequence[Path]) -> list[str]:
    import docent_native

    return list(docent_native.sha256_files([str(p) for p in paths]))


def chunker_options(settings: Settings, embedder: Embedder) -> ChunkerOptions:
    budget = min(settings.chunk_tokens, embedder.max_content_tokens)
    # A window as large as the chunk would only repeat the chunk's own vector.
    windows = settings.chunk_window_tokens if settings.chunk_window_tokens < budget else 0
    return ChunkerOptions(max_tokens=budget, overlap_sentences=settings.chunk_overlap_sentences,
                          context=settings.chunk_context, window_tokens=windows,
                          pack_code=settings.chunk_pack_code, window_at_blocks=settings.chunk_window_at_blocks,
                          topic_breaks=settings.chunk_topic_breaks,
                          window_at_topics=settings.chunk_window_at_topics)


@dataclass
class BuildSetup:
    """What a build knows once it has planned: the store's tables, the embedder, and what to do.

    Shared by the single-process build (`build_index`) and the distributed one
    (rag_system/indexing/distributed.py), so both plan, skip and remove exactly alike.
    """

    index: str
    settings: Settings
    embedder: Embedder
    options: ChunkerOptions
    table: ChunkTable
    manifest: Manifest
    records: dict[str, FileRecord]
    plan: BuildPlan
    stamps: dict[str, tuple[int, int] | None]  # by `SourceFile.key`
    converted: dict[str, ConvertedDocument]  # by key: files read to detect the language (EMBEDDER=auto)
    summary: BuildSummary
    started: float


def plan_build(
    inputs: Sequence[Path | str],
    index: str,
    settings: Settings,
    on_event: EventSink,
    *,
    embedder: Embedder | None = None,
    embedder_name: str | None = None,
    hold: frozenset[Path] = frozenset(),
    settle_s: float = 0.0,
    remove: Sequence[str] = (),
) -> BuildSetup:
    """Discover and hash the files, choose the embedder, open (or create) the tables and plan against
    the manifest; reports `build_started` and the unchanged and duplicate files. Writes nothing but
    empty tables (and a table whose vector layout changed is emptied: every file is then re-indexed)."""
    started = time.perf_counter()
    validate_index_name(index)
    files, skipped, roots = discover([Path(p) for p in inputs if not is_object_uri(p)], supported_extensions())
    objects = [str(p) for p in inputs if is_object_uri(p)]
    listing = list_objects(objects, supported_extensions(), settings) if objects else ObjectListing()
    # Before any byte is read: what the hash and the text must match (an object's hash is checked instead).
    stamps: dict[str, tuple[int, int] | None] = {str(f): file_stamp(f) for f in files}
    if settle_s > 0:
        recent = time.time_ns() - int(settle_s * 1e9)
        hold = hold | {f for f in files if (stamp := stamps[str(f)]) is None or stamp[1] > recent}
    held = [f for f in files if f in hold]  # still being written: indexed as they were, for now
    files = [f for f in files if f not in hold]
    db = open_store(settings)
    converted: dict[str, ConvertedDocument] = {}
    # Said before anything slow (reading files to detect their language can take a minute of OCR), so a
    # build reports that it is working from its first second, not only once the plan is made.
    count = len(files) + len(listing.found)
    on_event(BuildEvent("build_preparing", data={"files": count, "step": "planning"}))

    def sample() -> list[str]:
        on_event(BuildEvent("build_preparing", data={"files": count, "step": "detecting_language"}))
        return _language_sample([*files, *(o.uri for o in listing.found)], settings, converted, on_event)

    embedder = choose_embedder(db, index, settings, embedder, embedder_name, sample=sample)
    options = chunker_options(settings, embedder)
    summary = BuildSummary(index=index)
    sources = [SourceFile(f, digest, f.stat().st_size) for f, digest in zip(files, hash_files(files))]
    sources += [SourceFile(Path(object_name(o.uri)), digest, o.size, o.uri)
                for o, digest in zip(listing.found, hash_objects([o.uri for o in listing.found], settings))]
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
    plan = make_plan(sources, [*map(str, skipped), *listing.skipped], [*map(str, roots), *listing.roots], records,
                     options.version, embedder.identity.model_id, map(str, held))
    listed = {source.key for source in sources}
    plan.removed.extend(records[p] for p in dict.fromkeys(remove) if p in records and p not in listed
                        and records[p] not in plan.removed)
    _report_plan(plan, summary, on_event, records)
    return BuildSetup(index, settings, embedder, options, table, manifest, records, plan, stamps, converted,
                      summary, started)


def remove_gone(setup: BuildSetup, on_event: EventSink) -> None:
    """Drop the rows and manifest records of the files the plan removes (rows another path shares stay)."""
    for record in setup.plan.removed:
        if not shared_elsewhere(record.document_id, record.path, setup.records):
            setup.table.delete_documents([record.document_id])
        setup.manifest.remove([record.path])
        setup.summary.removed += 1
        on_event(BuildEvent("file_removed", record.path))


def finish_build(setup: BuildSetup, timings: dict[str, float], on_event: EventSink) -> BuildSummary:
    """Refresh the full-text and ANN indexes after the writes, fill in the totals, report `build_done`."""
    table, manifest, settings, summary = setup.table, setup.manifest, setup.settings, setup.summary
    t0 = time.perf_counter()
    changed = bool(summary.added or summary.updated or summary.removed)
    fts = fts_options(settings, table.sample_texts())
    # With nothing written and every full-text index current, there is nothing to refresh or compact.
    if changed or not table.fts_current(**fts):
        on_event(BuildEvent("fts_refreshed", data={"index": setup.index}))
        table.refresh_fts(**fts, keep_versions_s=settings.keep_versions_s)
        manifest.compact(settings.keep_versions_s)
    timings["fts"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    if table.refresh_ann(settings.ann_min_chunks):
        timings["ann"] = time.perf_counter() - t0
    summary.index_chunks = table.count()
    summary.index_documents = len(manifest.records())
    summary.timings = timings
    summary.seconds = time.perf_counter() - setup.started
    on_event(BuildEvent("build_done", data=summary.to_json()))
    return summary


def build_index(
    inputs: Sequence[Path | str],
    index: str,
    settings: Settings,
    *,
    embedder: Embedder | None = None,
    embedder_name: str | None = None,
    on_event: EventSink = ignore_event,
    cancel: threading.Event | None = None,
    hold: frozenset[Path] = frozenset(),
    settle_s: float = 0.0,
    remove: Sequence[str] = (),
) -> BuildSummary:
    """Bring index `index` in line with the files under `inputs`.

    The embedder is the index's own (`choose_embedder`); `embedder_name`
    chooses it for a new index and must match an existing one's. Without an
    `embedder`, the model loads only once a file needs embedding. `hold`: files left as they are
    indexed (still being written), and with `settle_s` every file modified within that time.
    `remove`: indexed paths to drop in this build (the previous version of a replaced upload).
    """
    on_event = BuildProgress().sink(on_event)
    setup = plan_build(inputs, index, settings, on_event, embedder=embedder, embedder_name=embedder_name,
                       hold=hold, settle_s=settle_s, remove=remove)
    remove_gone(setup, on_event)
    embedder, options, summary, converted = setup.embedder, setup.options, setup.summary, setup.converted

    timings = {"convert": 0.0, "embed": 0.0, "write": 0.0}
    work = setup.plan.to_process
    writer = GroupWriter(setup.table, setup.manifest, embedder, options, summary, timings, on_event, setup.records)

    def prepare(item: tuple[SourceFile, FileRecord | None]) -> Prepared:
        source, previous = item
        return prepare_file(source, previous, settings, embedder, options, on_event, converted,
                            setup.stamps.get(source.key))

    taken = 0
    behind = Behind()
    try:
        with short_switch_interval(), Ahead(work, prepare) as ahead:
            for group in ahead.groups(EMBED_GROUP_CHUNKS):
                if cancel is not None and cancel.is_set():
                    raise BuildCancelled(f"build of {index!r} cancelled after {taken} of {len(work)} files")
                taken += len(group)
                timings["convert"] += sum(p.seconds for p in group)
                embedded = writer.embed(group)
                behind.submit(writer.write, group, *embedded)
    finally:
        behind.close()
    return finish_build(setup, timings, on_event)


def _report_plan(plan: BuildPlan, summary: BuildSummary, on_event: EventSink,
                 records: dict[str, FileRecord]) -> None:
    summary.skipped = list(plan.skipped)
    on_event(BuildEvent("build_started", data={
        "to_process": len(plan.to_process), "unchanged": len(plan.unchanged),
        "removed": len(plan.removed), "skipped": len(plan.skipped),
        "bytes": sum(source.size for source, _ in plan.to_process),
    }))
    for source in plan.unchanged:
        summary.unchanged += 1
        # Its page and chunk counts from the manifest, so a job lists every file with its size in pages.
        known = records.get(source.key)
        counts = {"pages": known.pages, "chunks": known.chunks} if known is not None else {}
        on_event(BuildEvent("file_unchanged", source.key, counts))
    for source, owner in plan.duplicates:
        summary.duplicates.append({"path": source.key, "same_content_as": owner})
        on_event(BuildEvent("file_duplicate", source.key, {"same_content_as": owner}))


def _language_sample(files: Sequence[Path | str], settings: Settings, converted: dict[str, ConvertedDocument],
                     on_event: EventSink = ignore_event, limit: int = 3) -> list[str]:
    """Text of the first few convertible files or objects (kept by key, so they are not converted twice)."""
    texts: list[str] = []
    for item in files[: limit * 2]:
        key = str(item)
        name = object_name(item) if isinstance(item, str) else item.name
        on_event(BuildEvent("build_preparing", data={"files": len(files), "step": "detecting_language",
                                                     "reading": name}))
        try:
            if isinstance(item, str):
                with fetched(item, settings) as local:
                    converted[key] = convert(local, settings)
            else:
                converted[key] = convert(item, settings)
        except ConversionError:
            continue
        texts.extend(b.text for b in converted[key].blocks[:200])
        if len(converted) >= limit:
            break
    return texts
