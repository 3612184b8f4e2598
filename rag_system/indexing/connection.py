"""The LanceDB connection: how the product opens its store, compacts tables and lists indexes.

Apart from the chunk table (store.py) because the windows table, the manifest,
the sync state and the scale tools open and list tables too, and none of them
needs the chunk schema to do it.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from rag_system.config import Settings

#: Prefix of every index's chunk table (the index name follows).
TABLE_PREFIX = "idx_"


def connect(uri: str, storage_options: dict[str, str] | None = None,
            read_consistency_s: float | None = None) -> Any:
    """Open the store. With `read_consistency_s`, long-lived table handles see
    other writers' commits within that many seconds (0 = every read checks)."""
    import lancedb

    interval = None if read_consistency_s is None else timedelta(seconds=read_consistency_s)
    return lancedb.connect(uri, storage_options=storage_options or None,
                           read_consistency_interval=interval)


def open_store(settings: Settings, *, replica: bool = False) -> Any:
    """The one way the product opens its store: `LANCEDB_URI` plus the AWS_* storage options.

    `replica` connections (the query side) see commits made by other
    processes within `DOCENT_READ_CONSISTENCY_S`; the writer's own handles
    always see its own commits, so it needs no interval.
    """
    return connect(settings.resolved_lancedb_uri, settings.storage_options,
                   settings.read_consistency_s if replica else None)


def compact(table: Any, keep_versions_s: float) -> None:
    """Compact and clean up, keeping every version a replica may still read (see `Settings.keep_versions_s`)."""
    table.optimize(cleanup_older_than=timedelta(seconds=keep_versions_s))


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
