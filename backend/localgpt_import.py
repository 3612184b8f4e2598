"""Bring a localGPT install across: its sessions, messages, indexes, their documents and links.

localGPT keeps everything in one SQLite file (`backend/chat_data.db`: `sessions`, `messages`,
`indexes`, `index_documents`, `session_indexes`, `session_documents`) and its uploads on disk.
The import keeps localGPT's ids, so the same session and index are the same row here and a
second run finds them and imports nothing twice. Messages become Docent turns (a user message
and the assistant message after it; their timestamps and metadata kept). Each document is
copied from its stored file into Docent's upload folder; a file that is gone is reported, not
fatal. Re-indexing is the RAG API's job (`backend/localgpt_reindex.py`): localGPT's LanceDB
vectors come from another embedder, so they are not reused; `--lancedb` only reports them.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from backend.store import Store
from backend.uploads import ALLOWED_EXTENSIONS, owner_dir, sanitize_filename


#: Marks what came from localGPT, on sessions' messages and indexes.
ORIGIN = "localgpt"


@dataclass
class ImportReport:
    sessions: int = 0
    sessions_existing: int = 0
    messages: int = 0
    messages_existing: int = 0
    indexes: int = 0
    indexes_existing: int = 0
    documents: int = 0
    documents_existing: int = 0
    links: int = 0
    missing_files: list[str] = field(default_factory=list)
    unsupported_files: list[str] = field(default_factory=list)
    session_documents: int = 0
    lancedb_tables: list[str] = field(default_factory=list)
    indexes_to_build: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def read_localgpt(db_path: Path) -> sqlite3.Connection:
    """localGPT's database, read-only (the import never writes to it)."""
    if not db_path.is_file():
        raise FileNotFoundError(f"no localGPT database at {db_path}")
    conn = sqlite3.connect(f"file:{db_path.resolve()}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise ValueError(f"{db_path} is not a SQLite database ({exc})") from exc
    if not {"sessions", "messages"} <= tables:
        conn.close()
        raise ValueError(f"{db_path} is not a localGPT database (it has no sessions and messages tables)")
    return conn


def import_localgpt(store: Store, uploads_root: Path, db_path: Path, *, uploads: Path | None = None,
                    lancedb: Path | None = None) -> ImportReport:
    report = ImportReport()
    src = read_localgpt(db_path)
    try:
        tables = {r[0] for r in src.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        for row in src.execute("SELECT * FROM sessions ORDER BY created_at, id"):
            _session(store, src, row, report)
        if "indexes" in tables:
            for row in src.execute("SELECT * FROM indexes ORDER BY created_at, id"):
                _index(store, src, row, report, uploads_root, db_path.parent, uploads)
        if "session_indexes" in tables:
            for row in src.execute("SELECT session_id, index_id FROM session_indexes ORDER BY linked_at, id"):
                if store.get_session(row["session_id"]) and store.get_index(row["index_id"]):
                    report.links += int(store.link(row["session_id"], row["index_id"]))
        if "session_documents" in tables:
            report.session_documents = int(src.execute("SELECT COUNT(*) FROM session_documents").fetchone()[0])
    finally:
        src.close()
    if lancedb is not None and lancedb.is_dir():
        report.lancedb_tables = sorted(p.name.removesuffix(".lance") for p in lancedb.glob("*.lance"))
    return report


def _session(store: Store, src: sqlite3.Connection, row: sqlite3.Row, report: ImportReport) -> None:
    created = store.import_session(row["id"], row["title"] or "New Chat", row["created_at"], row["updated_at"],
                                   row["model_used"] or "")
    report.sessions += int(created)
    report.sessions_existing += int(not created)
    turn: str | None = None
    for msg in src.execute("SELECT * FROM messages WHERE session_id = ? ORDER BY timestamp, rowid", (row["id"],)):
        sender = msg["sender"]
        if sender == "user" or turn is None:
            turn = f"lgpt-{msg['id']}"
        meta = _metadata(msg["metadata"])
        if sender == "assistant":
            meta.setdefault("status", "complete")
            meta.setdefault("answer_source", "imported")
        meta["imported_from"] = ORIGIN
        new = store.import_message(row["id"], turn, sender, msg["content"], msg["timestamp"], meta)
        report.messages += int(new)
        report.messages_existing += int(not new)
        if sender == "assistant":
            turn = None  # the next message starts a new turn


def _metadata(raw: str | None) -> dict[str, Any]:
    try:
        value = json.loads(raw or "{}")
    except (TypeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _index(store: Store, src: sqlite3.Connection, row: sqlite3.Row, report: ImportReport, uploads_root: Path,
           base: Path, uploads: Path | None) -> None:
    iid = row["id"]
    meta = {**_metadata(row["metadata"]), "origin": ORIGIN, "localgpt_table": row["vector_table_name"]}
    if store.get_index(iid) is None:
        store.create_index(row["name"] or iid, row["description"] or "", {**meta, "status": "created"}, index_id=iid)
        report.indexes += 1
    else:
        report.indexes_existing += 1
    added = 0
    for doc in src.execute("SELECT original_filename, stored_path FROM index_documents WHERE index_id = ? ORDER BY id",
                           (iid,)):
        name = doc["original_filename"] or Path(doc["stored_path"] or "").name
        found = _find_file(doc["stored_path"], name, base, uploads)
        if found is None:
            report.missing_files.append(f"{row['name']}: {name} ({doc['stored_path']})")
            continue
        if found.suffix.lower() not in ALLOWED_EXTENSIONS and Path(name).suffix.lower() not in ALLOWED_EXTENSIONS:
            report.unsupported_files.append(f"{row['name']}: {name}")
            continue
        if _copy_document(store, uploads_root, iid, found, name):
            added += 1
            report.documents += 1
        else:
            report.documents_existing += 1
    index = store.get_index(iid)
    if index and index["documents"] and (added or index["metadata"].get("status") != "ready"):
        report.indexes_to_build.append(iid)


def _find_file(stored: str | None, name: str, base: Path, uploads: Path | None) -> Path | None:
    """localGPT stored absolute paths, or paths relative to where it ran; `--uploads` is its upload folder."""
    candidates: list[Path] = []
    if stored:
        path = Path(stored)
        candidates += [path] if path.is_absolute() else [base / path, base.parent / path]
        if uploads is not None:
            candidates += [uploads / path.name, uploads / path]
    if uploads is not None and name:
        candidates.append(uploads / name)
    return next((c for c in candidates if c.is_file()), None)


def _copy_document(store: Store, uploads_root: Path, index_id: str, path: Path, name: str) -> bool:
    """Copy a file into the index's upload folder as `<sha256>_<name>`; False when it was there already."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    sha = digest.hexdigest()
    clean = sanitize_filename(name if Path(name).suffix else path.name)
    target = owner_dir(uploads_root, index_id) / f"{sha}_{clean}"
    before = {d["stored_path"] for d in (store.get_index(index_id) or {}).get("documents", [])}
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    store.add_document(filename=clean, stored_path=str(target), sha256=sha, size=target.stat().st_size,
                       index_id=index_id)
    return str(target) not in before
