"""What a synced index remembers: its bound folders and how its last syncs went.

Stored beside the index's tables, as `idx_<index>__sync` (one row, a JSON
document), because the RAG API owns the store and the store may be an object
store: a binding and its history move and vanish with the index. Only the
writer (the job queue, or the CLI) changes it.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from typing import Any

import pyarrow as pa

from rag_system.indexing.store import table_exists, table_name

SYNC_SUFFIX = "__sync"
HISTORY = 10
_SCHEMA = pa.schema([pa.field("key", pa.string(), nullable=False), pa.field("state", pa.string())])


def sync_table_name(index: str) -> str:
    return table_name(index) + SYNC_SUFFIX


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


@dataclass
class SyncRun:
    """One sync: when, what it changed, what failed, what it left for later (files still being written)."""

    at: str
    seconds: float = 0.0
    trigger: str = "manual"  # manual | watch | rescan | bind | cli
    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    changed: list[dict[str, str]] = field(default_factory=list)  # {"path", "change": added|updated|removed}
    failed: list[dict[str, str]] = field(default_factory=list)  # {"path", "reason"}
    held: list[str] = field(default_factory=list)  # still changing when the sync looked: next time
    error: str | None = None

    @property
    def files_changed(self) -> int:
        return self.added + self.updated + self.removed


@dataclass
class SyncState:
    folders: list[str] = field(default_factory=list)
    embedder: str | None = None  # asked for when the folder was bound (a new index's embedder)
    runs: list[SyncRun] = field(default_factory=list)  # newest first

    @property
    def last(self) -> SyncRun | None:
        return self.runs[0] if self.runs else None

    def record(self, run: SyncRun) -> None:
        self.runs = [run, *self.runs][:HISTORY]

    def to_json(self) -> dict[str, Any]:
        last = self.last
        return {"folders": list(self.folders), "embedder": self.embedder,
                "last_sync": None if last is None else {**asdict(last), "files_changed": last.files_changed},
                "history": [{"at": r.at, "trigger": r.trigger, "files_changed": r.files_changed,
                             "failed": len(r.failed), "error": r.error} for r in self.runs]}


class SyncStore:
    """Read and write one index's `SyncState`."""

    def __init__(self, db: Any, index: str) -> None:
        self.db = db
        self.index = index

    def load(self) -> SyncState:
        name = sync_table_name(self.index)
        if not table_exists(self.db, name):
            return SyncState()
        rows = self.db.open_table(name).to_arrow().to_pylist()
        if not rows:
            return SyncState()
        raw = json.loads(rows[0]["state"] or "{}")
        runs = [SyncRun(**run) for run in raw.get("runs", [])]
        return SyncState(folders=list(raw.get("folders", [])), embedder=raw.get("embedder"), runs=runs)

    def save(self, state: SyncState) -> None:
        name = sync_table_name(self.index)
        payload = json.dumps({"folders": state.folders, "embedder": state.embedder,
                              "runs": [asdict(r) for r in state.runs]}, ensure_ascii=False)
        data = pa.table({"key": ["state"], "state": [payload]}, schema=_SCHEMA)
        if not table_exists(self.db, name):
            self.db.create_table(name, data=data, schema=_SCHEMA)
            return
        table = self.db.open_table(name)
        table.merge_insert("key").when_matched_update_all().when_not_matched_insert_all().execute(data)

    def drop(self) -> None:
        name = sync_table_name(self.index)
        if table_exists(self.db, name):
            self.db.drop_table(name)
