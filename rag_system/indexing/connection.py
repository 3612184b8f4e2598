"""The LanceDB connection: how the product opens its store, compacts tables and lists indexes.

Apart from the chunk table (store.py) because the windows table, the manifest,
the sync state and the scale tools open and list tables too, and none of them
needs the chunk schema to do it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from datetime import timedelta
from typing import Any

from rag_system.config import Settings
from rag_system.indexing.allocator import fix_mmap_threshold

#: Prefix of every index's chunk table (the index name follows).
TABLE_PREFIX = "idx_"


#: LanceDB's (index, metadata) caches in MiB when the caller names none: `Settings`' defaults.
DEFAULT_CACHE_MB = (512, 128)

_sessions: dict[tuple[int, int], Any] = {}
_sessions_lock = threading.Lock()


def cache_session(index_cache_mb: int, metadata_cache_mb: int) -> Any:
    """The process's one LanceDB session (index and metadata caches) for these sizes.

    Why one: without a session every `lancedb.connect` gets caches of its
    own, each allowed 6 GiB of index data and 1 GiB of metadata, and the RAG
    API opens a connection for queries, one for sync and one per build. One
    bounded pair, shared, holds what the queries reuse (the vector index's
    partitions, posting lists, scalar index pages). Its size trades memory
    for speed: at a million chunks the gold questions filled 0.78 GB of an
    unbounded one, 16 threads of searches ran about half as fast with 320 MB,
    and under 16 clients for 180 s the RAG API peaked at 2.63 GB with 640 +
    128 MB and at 2.50 GB with the default 512 + 128 MB, against a 2.5 GB
    budget; 64 MB of metadata cost the 1M first stage 5-6 ms more in reading
    the winners' rows (Documentation/evaluation.md, "A million chunks", third
    round).
    """
    import lancedb

    key = (int(index_cache_mb), int(metadata_cache_mb))
    with _sessions_lock:
        session = _sessions.get(key)
        if session is None:
            session = lancedb.Session(index_cache_size_bytes=key[0] * 2**20,
                                      metadata_cache_size_bytes=key[1] * 2**20)
            _sessions[key] = session
        return session


def connect(uri: str, storage_options: dict[str, str] | None = None,
            read_consistency_s: float | None = None,
            cache_mb: tuple[int, int] = DEFAULT_CACHE_MB) -> Any:
    """Open the store. With `read_consistency_s`, long-lived table handles see
    other writers' commits within that many seconds (0 = every read checks).
    `cache_mb` sizes LanceDB's (index, metadata) caches, shared by every
    connection of the process that asks for the same sizes."""
    import lancedb

    interval = None if read_consistency_s is None else timedelta(seconds=read_consistency_s)
    return lancedb.connect(uri, storage_options=storage_options or None,
                           read_consistency_interval=interval, session=cache_session(*cache_mb))


def open_store(settings: Settings, *, replica: bool = False) -> Any:
    """The one way the product opens its store: `LANCEDB_URI` plus the AWS_* storage options.

    `replica` connections (the query side) see commits made by other
    processes within `DOCENT_READ_CONSISTENCY_S`; the writer's own handles
    always see its own commits, so it needs no interval. A process that
    opens a replica connection serves questions (the RAG API), and from then
    on its large buffers are mapped on their own (`allocator`,
    `DOCENT_MMAP_THRESHOLD_KB`). A build alone (the CLI, the benchmarks)
    keeps glibc's own rule: its memory is not under the RAG API's budget, and
    mapping each large activation buffer anew is extra work for it.
    """
    if replica:
        fix_mmap_threshold(settings.malloc_mmap_threshold_kb)
    return connect(settings.resolved_lancedb_uri, settings.storage_options,
                   settings.read_consistency_s if replica else None,
                   (settings.lancedb_index_cache_mb, settings.lancedb_metadata_cache_mb))


def compact(table: Any, keep_versions_s: float) -> None:
    """Compact and clean up, keeping every version a replica may still read (see `Settings.keep_versions_s`),
    and every version at all while a backup links the store's files (`cleanup_held`)."""
    with _cleanup.running():
        table.optimize(cleanup_older_than=_cleanup.horizon(keep_versions_s))


#: While a backup is staged, cleanup keeps this much history: all of it.
_HELD_HORIZON = timedelta(days=36500)


class _CleanupHolds:
    """Compactions of this process against backups of its store (indexing/snapshot.py).

    Why process state: the RAG API's one writer thread compacts, and a backup request of the same
    process must see no version of a table it is copying deleted under it. A hold waits for a
    cleanup in flight, then makes every compaction keep all versions until it is released; holds
    last as long as linking the files takes (milliseconds to seconds), not the whole download.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._holds = 0
        self._running = 0

    def horizon(self, keep_versions_s: float) -> timedelta:
        with self._cond:
            return _HELD_HORIZON if self._holds else timedelta(seconds=keep_versions_s)

    @contextmanager
    def running(self) -> Iterator[None]:
        with self._cond:
            self._running += 1
        try:
            yield
        finally:
            with self._cond:
                self._running -= 1
                self._cond.notify_all()

    @contextmanager
    def held(self) -> Iterator[None]:
        with self._cond:
            self._holds += 1
            self._cond.wait_for(lambda: self._running == 0)
        try:
            yield
        finally:
            with self._cond:
                self._holds -= 1


_cleanup = _CleanupHolds()


def cleanup_held() -> AbstractContextManager[None]:
    """No compaction of this process removes any table version inside this block (see `_CleanupHolds`)."""
    return _cleanup.held()


#: How LanceDB reports a data file that a cleanup removed under an old table handle.
_MISSING_MARKERS = ("not found", "notfound", "no such file", "does not exist")


def is_missing_file(exc: BaseException) -> bool:
    """Whether `exc` is a read of a file that compaction and cleanup removed meanwhile."""
    text = str(exc).lower()
    return isinstance(exc, (OSError, RuntimeError, ValueError)) and any(m in text for m in _MISSING_MARKERS)


def list_indexes(db: Any) -> list[str]:
    names = _table_names(db)
    return sorted(n[len(TABLE_PREFIX):] for n in names
                  if n.startswith(TABLE_PREFIX) and "__" not in n)


def _table_names(db: Any) -> list[str]:
    # `table_exists` is a namespace operation that local folders do not
    # support, so existence is answered from the (paginated) listing.
    names: list[str] = []
    token = None
    while True:
        page = db.list_tables(page_token=token)
        names.extend(page.tables)
        token = page.page_token
        if not token:
            return names


def table_exists(db: Any, name: str) -> bool:
    if name not in _table_names(db):
        return False
    try:
        db.open_table(name)
    except ValueError:
        # Some S3 servers (SeaweedFS) keep a dropped table's empty "folder",
        # which the listing still reports; only a table that opens exists.
        return False
    return True
