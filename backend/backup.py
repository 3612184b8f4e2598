"""Backups of a running Docent and their restore into an empty data folder (`python -m backend backup|restore`).

A backup folder holds what the services own, each part copied consistently while they run:

- `docent.db`: the gateway's SQLite through SQLite's online backup API (one consistent snapshot,
  WAL included; a plain file copy of a database in WAL mode may miss recent commits);
- `uploads/`: the stored files (written once, under a temporary name first, so a finished file
  is never half-copied; the temporary `.upload-*` files are left out);
- `lancedb/`: the RAG API's index store, streamed by the RAG API itself (`POST /backup`, service
  token): it alone owns the store, and it copies each table at a committed version
  (rag_system/indexing/snapshot.py);
- `auth.secret` when accounts made one (it signs grants and personal tokens: keep the folder private);
- `backup.json`, written last: what was copied and from where. A folder without it is incomplete.

The order is database, uploads, store: every document the database lists has its file in the copy,
and the store is at least as new as the database (an index built meanwhile may hold more rows).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import tarfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any

from common import grants

BACKUP_FILE = "backup.json"
FORMAT = 1
#: The RAG API's last tar member (rag_system/indexing/snapshot.py): without it the stream was cut off.
SNAPSHOT_MEMBER = "snapshot.json"
DATABASE = "docent.db"
UPLOADS = "uploads"
STORE = "lancedb"
_PARTIAL_UPLOAD = ".upload-"


class BackupError(RuntimeError):
    """A backup or restore that cannot go on (the RAG API failed, the stream broke off); the message says
    what to do."""


class BackupRefused(BackupError):
    """The caller's to fix: a folder that is not empty, a folder that is not a backup."""


@dataclass(frozen=True)
class Report:
    directory: str
    sessions: int
    messages: int
    indexes: int
    documents: int
    uploads: int
    tables: dict[str, int]
    bytes: int
    seconds: float

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def take(database: Path, data_dir: Path, uploads: Path, dest: Path,
         open_store: Callable[[], IO[bytes]]) -> Report:
    """Back up into `dest` (missing or empty). `open_store()` returns the RAG API's snapshot stream."""
    t0 = time.perf_counter()
    _require_empty(dest, "the backup folder")
    dest.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(dest, 0o700)
    if not database.is_file():
        raise BackupRefused(f"no gateway database at {database} (DOCENT_DATA_DIR / DB_PATH)")
    copy_database(database, dest / DATABASE)
    secret = data_dir / grants.SECRET_FILE
    if secret.is_file():
        _copy_private(secret, dest / grants.SECRET_FILE)
    files = copy_uploads(uploads, dest / UPLOADS)
    with open_store() as stream:
        tables = receive_store(stream, dest / STORE)
    report = _report(dest, tables, time.perf_counter() - t0, files)
    meta = {"format": FORMAT, "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "source": {"data_dir": str(data_dir.resolve()), "database": str(database.resolve()),
                       "uploads": str(uploads.resolve())}, **report.to_json()}
    tmp = dest / (BACKUP_FILE + ".partial")
    tmp.write_text(json.dumps(meta, indent=2))
    os.replace(tmp, dest / BACKUP_FILE)
    return report


def restore(src: Path, database: Path, data_dir: Path, uploads: Path, store: Path) -> Report:
    """Put the backup in `src` into an empty data folder (the services stopped or not yet started)."""
    t0 = time.perf_counter()
    meta = read_meta(src)
    if "://" in str(store):
        raise BackupRefused(f"the index store {store} is an object store: restore its bucket with the "
                          "storage's own tools")
    secret = data_dir / grants.SECRET_FILE
    for what, path in (("the database", database), ("the upload folder", uploads), ("the index store", store)):
        _require_empty(path, what)
    if Path(f"{database}-wal").exists() or (src / grants.SECRET_FILE).is_file() and secret.exists():
        raise BackupRefused(f"{data_dir} is not an empty data folder: restore into a new one")
    database.parent.mkdir(parents=True, exist_ok=True)
    partial = database.with_name(database.name + ".restoring")
    copy_database(src / DATABASE, partial)
    _rebase_uploads(partial, Path(meta["source"]["uploads"]), uploads.resolve())
    if (src / UPLOADS).is_dir():
        shutil.copytree(src / UPLOADS, uploads, dirs_exist_ok=True)
    if (src / STORE).is_dir():
        shutil.copytree(src / STORE, store, dirs_exist_ok=True)
    if (src / grants.SECRET_FILE).is_file():
        _copy_private(src / grants.SECRET_FILE, secret)
    os.replace(partial, database)  # last: a restore cut short leaves no database, so it can be run again
    return _report(src, dict(meta.get("tables") or {}), time.perf_counter() - t0,
                   sum(1 for p in uploads.rglob("*") if p.is_file()) if uploads.is_dir() else 0)


def read_meta(src: Path) -> dict[str, Any]:
    try:
        meta = json.loads((src / BACKUP_FILE).read_text())
    except FileNotFoundError as exc:
        raise BackupRefused(f"{src} is not a complete Docent backup (no {BACKUP_FILE}: the backup did not "
                          "finish)") from exc
    except (OSError, ValueError) as exc:
        raise BackupRefused(f"cannot read {src / BACKUP_FILE}: {exc}") from exc
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise BackupRefused(f"{src / BACKUP_FILE} is not a backup this version can restore "
                            f"(format {meta.get('format') if isinstance(meta, dict) else '?'})")
    return meta


def copy_database(src: Path, dest: Path) -> None:
    """SQLite's online backup: a consistent snapshot even while the gateway writes (WAL mode)."""
    source = sqlite3.connect(f"file:{src}?mode=ro", uri=True, timeout=30)
    try:
        target = sqlite3.connect(dest)
        try:
            source.backup(target)
        finally:
            target.close()
    finally:
        source.close()


def copy_uploads(src: Path, dest: Path) -> int:
    """Every stored file; a file deleted meanwhile is skipped (its row may still name it, as before)."""
    count = 0
    dest.mkdir(parents=True, exist_ok=True)
    for dirpath, _dirs, names in os.walk(src):
        here = Path(dirpath)
        for name in names:
            if name.startswith(_PARTIAL_UPLOAD):
                continue
            target = dest / here.relative_to(src) / name
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                shutil.copy2(here / name, target)
            except FileNotFoundError:
                continue
            count += 1
    return count


def receive_store(stream: IO[bytes], dest: Path) -> dict[str, int]:
    """Unpack the RAG API's snapshot; the table versions it holds. A stream cut short is an error."""
    dest.mkdir(parents=True, exist_ok=True)
    described: dict[str, Any] | None = None
    try:
        with tarfile.open(fileobj=stream, mode="r|") as tar:
            for member in tar:
                if described is not None:
                    raise BackupError(f"the index store stream has data after {SNAPSHOT_MEMBER}")
                source = tar.extractfile(member) if member.isfile() else None
                if source is None:
                    raise BackupError(f"unexpected entry {member.name!r} in the index store stream")
                if member.name == SNAPSHOT_MEMBER:
                    described = json.loads(source.read())
                    continue
                target = _inside(dest, member.name)
                target.parent.mkdir(parents=True, exist_ok=True)
                with target.open("wb") as out:
                    shutil.copyfileobj(source, out, 1 << 20)
    except (tarfile.TarError, OSError, ValueError) as exc:
        raise BackupError(f"the index store stream from the RAG API broke off ({exc}); run the backup again") from exc
    if described is None:
        raise BackupError("the index store stream from the RAG API ended early; run the backup again")
    return {str(k).removesuffix(".lance"): int(v) for k, v in (described.get("tables") or {}).items()}


def service_token(api_token: str, auth_secret: str, data_dir: Path) -> str:
    """What the RAG API accepts from the gateway's tools: DOCENT_API_TOKEN, else the one the accounts' secret gives."""
    if api_token:
        return api_token
    secret = grants.load_secret(auth_secret, data_dir)
    return grants.service_token(secret) if secret else ""


def _inside(root: Path, name: str) -> Path:
    target = (root / name).resolve()
    if not target.is_relative_to(root.resolve()) or Path(name).is_absolute():
        raise BackupError(f"refusing the entry {name!r} of the index store stream (outside the store)")
    return target


def _require_empty(path: Path, what: str) -> None:
    if path.is_dir() and any(path.iterdir()) or path.is_file():
        raise BackupRefused(f"{what} {path} is not empty: back up into a new folder, or restore into an "
                          "empty data folder")


def _copy_private(src: Path, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(src.read_bytes())


def _rebase_uploads(database: Path, old: Path, new: Path) -> None:
    """Stored files are recorded by absolute path: point them at the new upload folder."""
    if old == new:
        return
    conn = sqlite3.connect(database)
    try:
        rows = conn.execute("SELECT id, stored_path FROM index_documents").fetchall()
        with conn:
            for row_id, stored in rows:
                path = Path(stored)
                if path.is_relative_to(old):
                    conn.execute("UPDATE index_documents SET stored_path = ? WHERE id = ?",
                                 (str(new / path.relative_to(old)), row_id))
    finally:
        conn.close()


def _report(folder: Path, tables: dict[str, int], seconds: float, uploads: int) -> Report:
    conn = sqlite3.connect(f"file:{folder / DATABASE}?mode=ro", uri=True)
    try:
        def count(table: str) -> int:
            return int(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])  # noqa: S608 (fixed names)

        counts = (count("sessions"), count("messages"), count("indexes"), count("index_documents"))
    finally:
        conn.close()
    size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    return Report(str(folder), *counts, uploads, tables, size, round(seconds, 2))
