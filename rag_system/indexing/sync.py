"""One sync of an index with its folders: wait for files to settle, run the incremental build, record it.

Why a settle step: people save large files in several writes, copy folders
in bursts, and editors write a temporary file then rename it. A file whose
size or modification time still moves, or that was modified within the last
`SYNC_SETTLE_S`, is *held*: it keeps whatever version the index has (or is
not added yet) and the next sync looks again, so a half-written file is never
indexed. Everything else goes through the ordinary incremental build (changed
files replaced, new ones added, deleted ones removed), whose per-document
single-commit writes let questions run throughout.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from rag_system.config import Settings
from rag_system.embedding.base import Embedder
from rag_system.indexing.builder import build_index
from rag_system.indexing.events import BuildEvent, BuildSummary, EventSink, ignore_event
from rag_system.indexing.store import open_store
from rag_system.indexing.sync_state import SyncRun, SyncStore, now_iso
from rag_system.ingestion import supported_extensions

log = logging.getLogger(__name__)

Snapshot = dict[Path, tuple[int, int]]  # path -> (size, mtime_ns)


def snapshot(folders: Iterable[Path]) -> Snapshot:
    """Size and modification time of every indexable file under `folders` (hidden ones skipped)."""
    allowed = set(supported_extensions())
    out: Snapshot = {}
    for folder in folders:
        for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
            dirnames[:] = [d for d in dirnames if not d.startswith(".")]
            for name in filenames:
                path = Path(dirpath) / name
                if name.startswith(".") or path.suffix.lower() not in allowed:
                    continue
                try:
                    info = path.stat()
                except OSError:
                    continue  # deleted meanwhile
                out[path.resolve()] = (info.st_size, info.st_mtime_ns)
    return out


def unsettled(folders: Sequence[Path], settle_s: float, cancel: threading.Event | None = None) -> frozenset[Path]:
    """Files still being written: changed while we watched `settle_s`, or modified within the last `settle_s`."""
    if settle_s <= 0:
        return frozenset()
    first = snapshot(folders)
    if cancel is not None:
        cancel.wait(settle_s)
    else:
        time.sleep(settle_s)
    second = snapshot(folders)
    recent = time.time_ns() - int(settle_s * 1e9)
    return frozenset(p for p, stat in second.items() if first.get(p) != stat or stat[1] > recent)


def sync_index(index: str, folders: Sequence[Path], settings: Settings, *, trigger: str = "manual",
               embedder: Embedder | None = None, embedder_name: str | None = None, on_event: EventSink = ignore_event,
               cancel: threading.Event | None = None,
               build: Callable[..., BuildSummary] = build_index) -> SyncRun:
    """Bring `index` in line with `folders` now (files still being written are held) and record the run.

    `build`: `build_index`, or what the RAG API builds with when `DOCENT_RAY_ADDRESS` sends its builds to
    Ray (`RayBuilds.build`, which takes the same arguments), so a sync runs where a build job would."""
    started = time.perf_counter()
    run = SyncRun(at=now_iso(), trigger=trigger)
    changes: list[dict[str, str]] = []

    def collect(event: BuildEvent) -> None:
        if event.type == "file_written" and event.path:
            changes.append({"path": event.path, "change": str(event.data.get("status", "updated"))})
        elif event.type == "file_removed" and event.path:
            changes.append({"path": event.path, "change": "removed"})
        on_event(event)

    try:
        missing = [str(f) for f in folders if not Path(f).is_dir()]
        if missing:  # an unmounted share must not empty the index
            raise FileNotFoundError(f"bound folder {missing[0]} is missing (moved, deleted or not mounted); "
                                    "nothing was changed: mount it again, or unbind it to drop its files")
        held = unsettled(folders, settings.sync_settle_s, cancel)
        run.held = sorted(str(p) for p in held)
        summary = build(list(folders), index, settings, embedder=embedder, embedder_name=embedder_name,
                        on_event=collect, cancel=cancel, hold=held, settle_s=settings.sync_settle_s)
        _fill(run, summary, changes)
    except Exception as exc:  # recorded for the index's sync status, then raised to the caller
        run.error = str(exc) or type(exc).__name__
        raise
    finally:
        run.seconds = round(time.perf_counter() - started, 2)
        _record(index, settings, run)
    log.info("synced %s (%s): %d changed, %d failed, %d held in %.1fs", index, trigger, run.files_changed,
             len(run.failed), len(run.held), run.seconds)
    return run


def _fill(run: SyncRun, summary: BuildSummary, changes: list[dict[str, str]]) -> None:
    run.added, run.updated, run.removed, run.unchanged = summary.added, summary.updated, summary.removed, \
        summary.unchanged
    run.failed = [dict(f) for f in summary.failed]
    run.held = sorted({*run.held, *summary.held})
    run.changed = changes


def _record(index: str, settings: Settings, run: SyncRun) -> None:
    try:
        store = SyncStore(open_store(settings), index)
        state = store.load()
        state.record(run)
        store.save(state)
    except Exception:  # the sync itself happened; a status that cannot be written must not undo it
        log.exception("could not record the sync of %s", index)
