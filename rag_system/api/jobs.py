"""The single writer of LanceDB: one thread runs index jobs one at a time (Documentation/architecture.md).

Builds and deletions are queued and executed in order by one thread, so two
writers never touch a table at once, while reads go on concurrently (LanceDB
readers see the last committed version). Each job keeps an in-memory record
(bounded: the oldest finished jobs are forgotten) with per-file progress
folded from the builder's `BuildEvent`s, and the event list itself, which an
SSE follower replays from the start and then follows live. After every job
the `on_changed(index)` callback drops cached table handles and cached
answers for that index.

With `DOCENT_RAY_ADDRESS` set, builds and syncs run on that Ray cluster
(`rag_system/indexing/ray_builds.py`) with the same events, cancel and
summary; the writer thread stays the one writer, as the cluster's driver.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rag_system.api.paths import AllowedRoots, PathNotAllowedError
from rag_system.config import Settings
from rag_system.indexing.builder import BuildCancelled, build_index
from rag_system.embedding.base import Embedder
from rag_system.indexing.events import BuildEvent
from rag_system.indexing.manifest import manifest_table_name
from rag_system.indexing.reembed import STAGING_SUFFIX
from rag_system.indexing.store import ChunkTable, open_store, table_exists, table_name
from rag_system.indexing.sync_state import SyncRun, sync_table_name
from rag_system.indexing.window_vectors import VECTORS_SUFFIX
from rag_system.indexing.windows import WINDOWS_SUFFIX

if TYPE_CHECKING:
    from rag_system.indexing.ray_builds import RayBuilds

log = logging.getLogger(__name__)

MAX_JOBS_KEPT = 200
MAX_EVENTS_PER_JOB = 20000
FINISHED = ("done", "failed", "cancelled")
_FILE_STATES = {"file_started": "running", "file_converted": "converting", "file_chunked": "chunked",
                "file_embedding": "embedding", "file_embedded": "embedded", "file_written": "done", "file_unchanged": "unchanged",
                "file_failed": "failed", "file_duplicate": "duplicate", "file_removed": "removed",
                "file_held": "held"}
_FILE_DONE = ("file_written", "file_unchanged", "file_failed", "file_duplicate", "file_held")


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


@dataclass
class Job:
    kind: str  # build | sync | delete | remove (one document)
    index: str
    paths: tuple[str, ...] = ()
    remove: tuple[str, ...] = ()  # build: manifest paths to drop in this build (replaced uploads)
    document_id: str = ""  # remove: the document's content id
    embedder: str | None = None  # asked for in the request (None: the index's own, or the default)
    trigger: str = ""  # what started a sync: manual | watch | rescan | bind
    chunk_tokens: int | None = None  # asked for in the request (None: CHUNK_SIZE)
    job_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    state: str = "queued"
    files: dict[str, dict[str, Any]] = field(default_factory=dict)
    done: int = 0
    total: int = 0
    overall: dict[str, Any] = field(default_factory=dict)  # the builder's latest `progress` (fraction, ETA, ...)
    summary: dict[str, Any] | None = None
    error: str | None = None
    result: dict[str, Any] = field(default_factory=dict)
    created_at: str = field(default_factory=_now)
    started_at: str | None = None
    finished_at: str | None = None
    events: list[dict[str, Any]] = field(default_factory=list)
    cancel: threading.Event = field(default_factory=threading.Event)
    changed: threading.Condition = field(default_factory=threading.Condition)

    @property
    def finished(self) -> bool:
        return self.state in FINISHED

    def to_json(self) -> dict[str, Any]:
        with self.changed:
            return {"job_id": self.job_id, "kind": self.kind, "index": self.index, "state": self.state,
                    "embedder": self.embedder,
                    "files": [dict(f) for f in self.files.values()],
                    "progress": {"done": self.done, "total": self.total}, "overall": dict(self.overall),
                    "summary": self.summary, "error": self.error, "created_at": self.created_at,
                    "started_at": self.started_at, "finished_at": self.finished_at}

    # -- progress ------------------------------------------------------------
    def handle(self, event: BuildEvent) -> None:
        """The builder's event sink (called from its worker threads)."""
        with self.changed:
            self._fold(event)
            self._append(event.to_json())

    def _fold(self, event: BuildEvent) -> None:
        self.overall = event.data.get("progress") or self.overall
        if event.type == "build_preparing":
            self.total = int(event.data.get("files", 0))
        if event.type == "build_started":
            self.total = int(event.data.get("to_process", 0)) + int(event.data.get("unchanged", 0))
        if event.path is None or event.type not in _FILE_STATES:
            return
        record = self.files.setdefault(event.path, {"path": event.path, "state": "queued", "pages": None,
                                                   "chunks": None, "error": None})
        record["state"] = _FILE_STATES[event.type]
        for count in ("pages", "chunks", "chunks_done"):
            if count in event.data:
                record[count] = event.data[count]
        if event.type == "file_failed":
            record["error"] = event.data.get("reason") or "unknown error"
        if event.type == "file_duplicate":
            record["same_content_as"] = event.data.get("same_content_as")
            self.total += 1
        if event.type in _FILE_DONE:
            self.done += 1

    def _append(self, payload: dict[str, Any]) -> None:
        if len(self.events) < MAX_EVENTS_PER_JOB:
            self.events.append(payload)
        self.changed.notify_all()

    def finish(self, state: str, error: str | None = None, summary: dict[str, Any] | None = None) -> None:
        with self.changed:
            self.state, self.error, self.summary = state, error, summary
            self.finished_at = _now()
            terminal: dict[str, Any] = {"type": "done" if state == "done" else "failed", "job_id": self.job_id,
                                        "index": self.index, "state": state}
            if summary is not None:
                terminal["summary"] = summary
            if error is not None:
                terminal["error"] = error
            self.events.append(terminal)  # always kept, even past the cap
            self.changed.notify_all()

    def wait_events(self, cursor: int, timeout: float) -> tuple[list[dict[str, Any]], bool]:
        """Events after `cursor` (waiting up to `timeout` for some), and whether the job is over."""
        with self.changed:
            if cursor >= len(self.events) and not self.finished:
                self.changed.wait(timeout)
            return list(self.events[cursor:]), self.finished


class JobQueue:
    def __init__(self, settings: Settings, embedder: Embedder, roots: AllowedRoots,
                 on_changed: Callable[[str], None] = lambda index: None) -> None:
        self.settings = settings
        self.embedder = embedder
        self.roots = roots
        self.on_changed = on_changed
        # Called after every sync with its run (the sync service re-arms indexes with files still settling).
        self.after_sync: Callable[[str, SyncRun], None] = lambda index, run: None
        self._jobs: OrderedDict[str, Job] = OrderedDict()
        self._lock = threading.Lock()
        self._queue: queue.Queue[Job | None] = queue.Queue()
        self._thread = threading.Thread(target=self._run, name="docent-index-writer", daemon=True)
        self.finished_counts = {"done": 0, "failed": 0, "cancelled": 0}
        self.ray = _ray_builds(settings)

    # -- API -------------------------------------------------------------------
    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        with self._lock:
            for job in self._jobs.values():
                job.cancel.set()
        self._queue.put(None)
        self._thread.join(timeout)
        if self.ray is not None:  # waits for a distributed build still running (cancelled above) to end
            self.ray.close()

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    def submit_build(self, index: str, paths: list[Path], embedder: str | None = None,
                     chunk_tokens: int | None = None, remove: tuple[str, ...] = ()) -> Job:
        return self._submit(Job("build", index, tuple(str(p) for p in paths), embedder=embedder,
                                chunk_tokens=chunk_tokens, remove=remove))

    def submit_remove(self, index: str, document_id: str, path: str | None = None) -> Job:
        """Queue the removal of one document (rag_system/indexing/removal.py), behind any build."""
        return self._submit(Job("remove", index, (path,) if path else (), document_id=document_id))

    def submit_sync(self, index: str, folders: list[Path], trigger: str, embedder: str | None = None) -> Job:
        """Queue a sync of `index` with its folders, unless one is already waiting to start (it will see
        every change made until it starts)."""
        with self._lock:
            for job in self._jobs.values():
                if job.index == index and job.kind == "sync" and job.state == "queued":
                    return job
        return self._submit(Job("sync", index, tuple(str(p) for p in folders), embedder=embedder, trigger=trigger))

    def latest(self, index: str, kind: str) -> Job | None:
        """The most recent job of this kind for `index` (kept jobs only)."""
        with self._lock:
            found = [j for j in self._jobs.values() if j.index == index and j.kind == kind]
        return found[-1] if found else None

    def submit_delete(self, index: str) -> Job:
        """Queue a deletion; queued or running builds and syncs of that index are cancelled first."""
        with self._lock:
            for job in self._jobs.values():
                if job.index == index and job.kind in ("build", "sync") and not job.finished:
                    job.cancel.set()
        return self._submit(Job("delete", index))

    def get(self, job_id: str) -> Job | None:
        with self._lock:
            return self._jobs.get(job_id)

    def cancel(self, job_id: str) -> Job | None:
        job = self.get(job_id)
        if job is not None and not job.finished:
            job.cancel.set()
        return job

    def active_build(self, index: str) -> Job | None:
        """The queued or running build or sync of `index`, if there is one (the newest)."""
        with self._lock:
            found = [j for j in self._jobs.values()
                     if j.index == index and j.kind in ("build", "sync") and not j.finished]
        return found[-1] if found else None

    def counts(self) -> dict[str, int]:
        with self._lock:
            states = [j.state for j in self._jobs.values()]
        return {"queued": states.count("queued"), "running": states.count("running")}

    # -- the writer thread ------------------------------------------------------
    def _submit(self, job: Job) -> Job:
        with self._lock:
            self._jobs[job.job_id] = job
            self._forget_old()
        self._queue.put(job)
        log.info("job %s queued: %s index %s", job.job_id, job.kind, job.index)
        return job

    def _forget_old(self) -> None:
        while len(self._jobs) > MAX_JOBS_KEPT:
            old = next((k for k, j in self._jobs.items() if j.finished), None)
            if old is None:
                return
            del self._jobs[old]

    def _run(self) -> None:
        while True:
            job = self._queue.get()
            if job is None:
                return
            try:
                self._execute(job)
            except Exception as exc:  # a bug: record it, keep the writer alive
                log.exception("job %s crashed", job.job_id)
                self._finish(job, "failed", f"internal error ({type(exc).__name__})")
            with self._lock:
                self.finished_counts[job.state] = self.finished_counts.get(job.state, 0) + 1

    def _finish(self, job: Job, state: str, error: str | None = None,
                summary: dict[str, Any] | None = None) -> None:
        """Invalidate caches first, so a client that sees the terminal event never reads stale state."""
        try:
            self.on_changed(job.index)
        except Exception:
            log.exception("cache invalidation after job %s failed", job.job_id)
        job.finish(state, error, summary)

    def _execute(self, job: Job) -> None:
        if job.cancel.is_set():
            self._finish(job, "cancelled", "cancelled before it started")
            return
        with job.changed:
            job.state, job.started_at = "running", _now()
        t0 = time.perf_counter()
        if job.kind == "delete":
            deleted = self._drop(job.index)
            job.result = {"deleted": deleted}
            self._finish(job, "done", None if deleted else f"index {job.index!r} does not exist",
                         {"deleted": deleted})
        elif job.kind == "remove":
            self._remove(job)
        elif job.kind == "sync":
            self._sync(job)
        else:
            self._build(job)
        log.info("job %s %s: %s index %s in %.1f s", job.job_id, job.state, job.kind, job.index,
                 time.perf_counter() - t0)

    def _build(self, job: Job) -> None:
        try:
            paths = self.roots.resolve_all(list(job.paths))  # again: the tree may have changed since
            settings = replace(self.settings, chunk_tokens=job.chunk_tokens) if job.chunk_tokens else self.settings
            build = build_index if self.ray is None else self.ray.build
            summary = build(paths, job.index, settings, embedder=self.embedder,
                            embedder_name=job.embedder or self.settings.embedder, on_event=job.handle,
                            cancel=job.cancel, remove=job.remove)
        except BuildCancelled as exc:
            self._finish(job, "cancelled", str(exc))
        except (PathNotAllowedError, FileNotFoundError, ValueError, RuntimeError) as exc:
            log.warning("job %s failed: %s", job.job_id, exc)
            self._finish(job, "failed", str(exc))
        else:
            self._finish(job, "done", None, {**summary.to_json(), **self._identity(job.index),
                                             "chunk_size": settings.chunk_tokens})

    def _remove(self, job: Job) -> None:
        from rag_system.indexing.removal import remove_document

        try:
            done = remove_document(job.index, job.document_id, self.settings, job.paths[0] if job.paths else None)
        except LookupError as exc:  # no such index or document: the handler answers 404 with the code
            job.result = {"code": getattr(exc, "code", "document_not_found"), "message": str(exc)}
            self._finish(job, "failed", str(exc))
        else:
            job.result = done.to_json()
            self._finish(job, "done", None, job.result)

    def _identity(self, index: str) -> dict[str, Any]:
        """The embedding model and vector size the index is built with (localGPT's index panel shows them)."""
        try:
            model, dimension = ChunkTable.open(open_store(self.settings), index).recorded_identity()
        except Exception:  # the table is gone or unreadable: the build's summary says what it can
            return {}
        return {"embedding_model": model or None, "vector_dimensions": dimension or None}

    def _sync(self, job: Job) -> None:
        from rag_system.indexing.sync import sync_index

        try:
            # Checked again at every sync: a bound folder may have become a link to somewhere else.
            paths = [self.roots.resolve(f) if Path(f).exists() else Path(f) for f in job.paths]
            # The index's own embedder once it exists; before, the one asked for at bind time, else the default.
            run = sync_index(job.index, paths, self.settings, trigger=job.trigger, embedder=self.embedder,
                             embedder_name=job.embedder, on_event=job.handle, cancel=job.cancel,
                             build=build_index if self.ray is None else self.ray.build)
        except BuildCancelled as exc:
            self._finish(job, "cancelled", str(exc))
        except (PathNotAllowedError, FileNotFoundError, ValueError, RuntimeError) as exc:
            log.warning("sync job %s failed: %s", job.job_id, exc)
            self._finish(job, "failed", str(exc))
        else:
            self.after_sync(job.index, run)
            self._finish(job, "done", None, {"sync": asdict(run), "files_changed": run.files_changed})

    def _drop(self, index: str) -> bool:
        db = open_store(self.settings)
        name = table_name(index)
        existed = table_exists(db, name)
        # Every table of the index: chunks, their full-text windows and window vectors, the manifest.
        for table in (name, name + WINDOWS_SUFFIX, name + VECTORS_SUFFIX, manifest_table_name(index),
                      sync_table_name(index), name + STAGING_SUFFIX):
            if table_exists(db, table):
                db.drop_table(table)
        return existed


def _ray_builds(settings: Settings) -> RayBuilds | None:
    """The Ray cluster build jobs go to (`DOCENT_RAY_ADDRESS`); imported only when one is configured."""
    if not settings.ray_address:
        return None
    from rag_system.indexing.ray_builds import RayBuilds

    return RayBuilds(settings.ray_address)
