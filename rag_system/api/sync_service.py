"""Synced folders in the RAG API: bindings, the watcher, and syncs through the one job queue.

A binding ties an index to a folder inside the allowed roots
(`DOCENT_INDEX_ROOTS`). Bindings survive restarts (they are stored with the
index, `rag_system/indexing/sync_state.py`), are watched for file events and
rescanned on a timer (`rag_system/indexing/sync_watch.py`), and every sync is
a job on the index writer's queue, so syncs never run beside another write to
the same store and questions go on while they run.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from rag_system.api.jobs import Job, JobQueue
from rag_system.api.paths import AllowedRoots, PathNotAllowedError
from rag_system.config import Settings
from rag_system.indexing.store import TABLE_PREFIX, table_exists, table_name, validate_index_name
from rag_system.indexing.sync_state import SYNC_SUFFIX, SyncRun, SyncStore, sync_table_name
from rag_system.indexing.sync_watch import FolderWatcher

log = logging.getLogger(__name__)


class SyncError(ValueError):
    """A bind/unbind request the service cannot carry out; `code` is the API error code."""

    def __init__(self, code: str, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.code = code
        self.status = status


class SyncService:
    def __init__(self, settings: Settings, db: Any, jobs: JobQueue, roots: AllowedRoots) -> None:
        self.settings = settings
        self.db = db
        self.jobs = jobs
        self.roots = roots
        self.watcher = FolderWatcher(self.trigger, debounce_s=settings.sync_debounce_s,
                                     rescan_s=settings.sync_rescan_s)
        jobs.after_sync = self._after_sync

    def start(self) -> None:
        """Start watching every folder bound before (the bindings are kept with each index)."""
        self.watcher.start()
        for index in self._synced_indexes():
            for folder in SyncStore(self.db, index).load().folders:
                if not self.roots.contains(folder):  # bound with the CLI, outside what this API may index
                    log.warning("index %s: bound folder %s is outside DOCENT_INDEX_ROOTS; not watched", index, folder)
                elif Path(folder).is_dir():
                    self.watcher.bind(index, Path(folder))
                else:
                    log.warning("index %s: bound folder %s is missing; not watched", index, folder)

    def stop(self) -> None:
        self.watcher.stop()

    # -- requests ---------------------------------------------------------------------
    def bind(self, index: str, raw: str, embedder: str | None = None) -> tuple[dict[str, Any], Job]:
        """Bind `raw` (a folder inside the allowed roots) to `index` and start its first sync; `embedder`
        is the one a new index is built with (an existing index keeps its own)."""
        validate_index_name(index)
        folder = self._folder(raw)
        store = SyncStore(self.db, index)
        state = store.load()
        if str(folder) not in state.folders or (embedder and not state.embedder):
            if str(folder) not in state.folders:
                state.folders.append(str(folder))
            state.embedder = state.embedder or embedder
            store.save(state)
        self.watcher.bind(index, folder)
        job = self.trigger(index, "bind")
        return self.status(index), job

    def unbind(self, index: str, raw: str) -> dict[str, Any]:
        """Stop syncing a folder; what it brought into the index stays until the index is rebuilt or deleted."""
        store = SyncStore(self.db, index)
        state = store.load()
        wanted = os.path.realpath(os.path.abspath(os.path.expanduser(raw)))
        if wanted not in state.folders:
            raise SyncError("folder_not_bound", f"{raw!r} is not bound to index {index!r}", 404)
        state.folders.remove(wanted)
        store.save(state)
        self.watcher.unbind(index, Path(wanted))
        return self.status(index)

    def forget(self, index: str) -> None:
        """Stop watching an index's folders (it is being deleted; its bindings go with its tables)."""
        self.watcher.unbind(index)

    def trigger(self, index: str, reason: str = "manual") -> Job:
        state = SyncStore(self.db, index).load()
        if not state.folders:
            raise SyncError("no_synced_folders", f"index {index!r} has no bound folder: bind one first", 409)
        return self.jobs.submit_sync(index, [Path(f) for f in state.folders], reason, state.embedder)

    def known(self, index: str) -> bool:
        """Whether `index` exists or has a bound folder (its first sync may not have written it yet)."""
        return table_exists(self.db, table_name(index)) or table_exists(self.db, sync_table_name(index))

    def status(self, index: str) -> dict[str, Any]:
        state = SyncStore(self.db, index).load()
        job = self.jobs.latest(index, "sync")
        running = job is not None and not job.finished
        return {"index": index, **state.to_json(), "watching": self.watcher.events_supported,
                "rescan_s": self.settings.sync_rescan_s, "pending": self.watcher.pending(index),
                "state": (job.state if running else "idle") if job is not None else "idle",
                "job_id": job.job_id if job is not None else None}

    # -- internals ------------------------------------------------------------------------
    def _folder(self, raw: str) -> Path:
        try:
            folder = self.roots.resolve(raw)
        except PathNotAllowedError as exc:
            raise SyncError("path_not_allowed", str(exc), 403) from exc
        if not folder.exists():
            raise SyncError("path_not_found", f"no such folder: {raw}", 404)
        if not folder.is_dir():
            raise SyncError("not_a_folder", f"{raw!r} is not a folder: bind a folder, index single files", 400)
        return folder

    def _after_sync(self, index: str, run: SyncRun) -> None:
        if run.held:  # files still being written: look again once they have settled
            self.watcher.mark(index)

    def _synced_indexes(self) -> list[str]:
        names: list[str] = []
        token = None
        while True:
            page = self.db.list_tables(page_token=token)
            names.extend(n[len(TABLE_PREFIX):-len(SYNC_SUFFIX)] for n in page.tables
                         if n.startswith(TABLE_PREFIX) and n.endswith(SYNC_SUFFIX))
            token = page.page_token
            if not token:
                return sorted(names)
