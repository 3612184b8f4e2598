"""The gateway's SQLite store (the only writer): WAL mode, foreign keys on, a small pool.

Every write runs in `BEGIN IMMEDIATE`, so concurrent writers queue on SQLite's
lock (busy timeout) instead of failing half-way. Message order is a per-session
`seq` assigned inside that transaction; a turn (question + answer) is unique by
`turn_id`, so a retried save never duplicates messages. A lock held past the
busy timeout, or a full disk, rolls the transaction back and surfaces as
`StoreBusyError` / `StorageFullError` (the server answers 503 / 507).
"""

from __future__ import annotations

import json
import sqlite3
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from backend.migrations import migrate
from common.errors import DomainError

DEFAULT_TITLE = "New Chat"
TITLE_CHARS = 50


class TurnConflictError(DomainError, ValueError):
    """A turn id that already belongs to another session."""

    status, code = 409, "turn_conflict"


class StoreUnavailableError(DomainError, RuntimeError):
    """SQLite cannot serve the request now; nothing was changed (the transaction rolled back)."""


class StoreBusyError(StoreUnavailableError):
    """Another process held the database lock for longer than the busy timeout: worth a retry."""

    status, code, headers = 503, "store_busy", {"Retry-After": "5"}


class StorageFullError(StoreUnavailableError):
    """The disk holding the database is full."""

    status, code = 507, "insufficient_storage"


def _unavailable(exc: sqlite3.OperationalError) -> StoreUnavailableError | None:
    text = str(exc).lower()
    if "locked" in text or "busy" in text:
        return StoreBusyError(f"the database is locked by another process ({exc}); nothing was changed, try again")
    if "full" in text:
        return StorageFullError(f"the disk holding the database is full ({exc}); nothing was changed")
    return None


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def new_id() -> str:
    return uuid.uuid4().hex


def title_from(message: str) -> str:
    words = " ".join(message.split())
    return words if len(words) <= TITLE_CHARS else words[: TITLE_CHARS - 1].rstrip() + "…"


class Store:
    def __init__(self, path: Path, max_idle: int = 8, busy_timeout_s: float = 30.0) -> None:
        self.path = Path(path)
        self.busy_timeout_s = busy_timeout_s
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._idle: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._max_idle = max_idle
        with self._conn() as conn:
            conn.execute("PRAGMA journal_mode=WAL")
            migrate(conn)

    # -- connections -----------------------------------------------------------
    def _open(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=self.busy_timeout_s, isolation_level=None,
                               check_same_thread=False)
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute(f"PRAGMA busy_timeout={int(self.busy_timeout_s * 1000)}")
        conn.execute("PRAGMA synchronous=NORMAL")
        return conn

    @contextmanager
    def _conn(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            conn = self._idle.pop() if self._idle else None
        conn = conn or self._open()
        try:
            yield conn
        except sqlite3.OperationalError as exc:
            translated = _unavailable(exc)
            if translated is None:
                raise
            raise translated from exc
        finally:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            with self._lock:
                if len(self._idle) < self._max_idle:
                    self._idle.append(conn)
                    conn = None
            if conn is not None:
                conn.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self._conn() as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:  # SQLite may have rolled back already (disk full)
                    conn.execute("ROLLBACK")
                raise

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()

    # -- sessions --------------------------------------------------------------
    _SESSION_SQL = ("SELECT s.*, (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id) AS message_count "
                    "FROM sessions s")

    def create_session(self, title: str = DEFAULT_TITLE, model: str = "") -> dict[str, Any]:
        sid, ts = new_id(), now()
        with self._write() as c:
            c.execute("INSERT INTO sessions (id, title, created_at, updated_at, model_used) VALUES (?,?,?,?,?)",
                      (sid, title or DEFAULT_TITLE, ts, ts, model))
        return self.get_session(sid)  # type: ignore[return-value]

    def get_session(self, session_id: str) -> dict[str, Any] | None:
        with self._conn() as c:
            row = c.execute(f"{self._SESSION_SQL} WHERE s.id = ?", (session_id,)).fetchone()
        return dict(row) if row else None

    def list_sessions(self) -> list[dict[str, Any]]:
        with self._conn() as c:
            rows = c.execute(f"{self._SESSION_SQL} ORDER BY s.updated_at DESC, s.id").fetchall()
        return [dict(r) for r in rows]

    def rename_session(self, session_id: str, title: str) -> dict[str, Any] | None:
        with self._write() as c:
            cur = c.execute("UPDATE sessions SET title = ?, updated_at = ? WHERE id = ?", (title, now(), session_id))
        return self.get_session(session_id) if cur.rowcount else None

    def delete_session(self, session_id: str) -> list[str] | None:
        """Delete a session, its messages, links and pending uploads; returns those uploads' paths."""
        with self._write() as c:
            if not c.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone():
                return None
            rows = c.execute("SELECT stored_path FROM index_documents WHERE session_id = ? AND index_id IS NULL",
                             (session_id,)).fetchall()
            c.execute("DELETE FROM index_documents WHERE session_id = ? AND index_id IS NULL", (session_id,))
            c.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
        return [r["stored_path"] for r in rows]

    # -- messages --------------------------------------------------------------
    def get_messages(self, session_id: str) -> list[dict[str, Any]]:
        with self._conn() as c:
            rows = c.execute("SELECT * FROM messages WHERE session_id = ? ORDER BY seq", (session_id,)).fetchall()
        return [_message(r) for r in rows]

    def recent_messages(self, session_id: str, limit: int) -> list[dict[str, Any]]:
        """The last `limit` messages of a session, oldest first."""
        with self._conn() as c:
            rows = c.execute("SELECT * FROM (SELECT * FROM messages WHERE session_id = ? ORDER BY seq DESC LIMIT ?)"
                             " ORDER BY seq", (session_id, limit)).fetchall()
        return [_message(r) for r in rows]

    def get_turn(self, turn_id: str) -> dict[str, dict[str, Any]]:
        """The stored messages of one turn, by sender."""
        with self._conn() as c:
            rows = c.execute("SELECT * FROM messages WHERE turn_id = ?", (turn_id,)).fetchall()
        return {r["sender"]: _message(r) for r in rows}

    def add_user_message(self, session_id: str, turn_id: str, content: str,
                         metadata: dict[str, Any] | None = None) -> dict[str, Any]:
        """Store the question of a turn now (idempotent); the answer follows with `save_turn`."""
        with self._write() as c:
            row = self._insert_message(c, session_id, turn_id, "user", content, metadata or {})
        return _message(row)

    def save_turn(self, session_id: str, turn_id: str, question: str, answer: str,
                  answer_metadata: dict[str, Any], question_metadata: dict[str, Any] | None = None,
                  ) -> tuple[bool, list[dict[str, Any]]]:
        """Store a whole turn once. Returns (whether anything was new, [user, assistant])."""
        with self._write() as c:
            before = c.total_changes
            user = self._insert_message(c, session_id, turn_id, "user", question, question_metadata or {})
            bot = self._insert_message(c, session_id, turn_id, "assistant", answer, answer_metadata)
            created = c.total_changes != before
        return created, [_message(user), _message(bot)]

    def save_turn_matching(self, session_id: str, turn_id: str, question: str, answer: str,
                           meta: dict[str, Any], merge: dict[str, Any], match: Callable[[dict[str, Any]], bool],
                           within: int = 20) -> tuple[bool, list[dict[str, Any]]]:
        """`save_turn`, unless one of the last `within` turns has this question and answer and its answer's
        metadata passes `match`: then `merge` is added to it (its own keys win). One transaction, so two
        saves of one turn arriving together (localGPT's client and the RAG API) store it once."""
        with self._write() as c:
            if c.execute("SELECT 1 FROM messages WHERE turn_id = ?", (turn_id,)).fetchone() is None:
                rows = c.execute("SELECT * FROM messages WHERE session_id = ? ORDER BY seq DESC LIMIT ?",
                                 (session_id, 2 * within)).fetchall()
                turns: dict[str, dict[str, sqlite3.Row]] = {}
                for row in rows:  # newest first
                    turns.setdefault(row["turn_id"], {})[row["sender"]] = row
                for pair in turns.values():
                    user, bot = pair.get("user"), pair.get("assistant")
                    if user is None or bot is None or (user["content"], bot["content"]) != (question, answer):
                        continue
                    bot_meta = json.loads(bot["metadata"])
                    if not match(bot_meta):
                        continue
                    c.execute("UPDATE messages SET metadata = ? WHERE id = ?",
                              (json.dumps({**merge, **bot_meta}, default=str), bot["id"]))
                    bot = c.execute("SELECT * FROM messages WHERE id = ?", (bot["id"],)).fetchone()
                    return False, [_message(user), _message(bot)]
            before = c.total_changes
            user = self._insert_message(c, session_id, turn_id, "user", question, {})
            bot = self._insert_message(c, session_id, turn_id, "assistant", answer, meta)
            return c.total_changes != before, [_message(user), _message(bot)]

    def _insert_message(self, c: sqlite3.Connection, session_id: str, turn_id: str, sender: str,
                        content: str, metadata: dict[str, Any]) -> sqlite3.Row:
        existing = c.execute("SELECT * FROM messages WHERE turn_id = ? AND sender = ?", (turn_id, sender)).fetchone()
        if existing is not None:
            if existing["session_id"] != session_id:
                raise TurnConflictError(f"turn {turn_id!r} belongs to another session")
            return existing
        seq = c.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM messages WHERE session_id = ?",
                        (session_id,)).fetchone()[0]
        ts = now()
        mid = new_id()
        meta = dict(metadata, turn_id=turn_id)
        c.execute("INSERT INTO messages (id, session_id, seq, turn_id, sender, content, timestamp, metadata) "
                  "VALUES (?,?,?,?,?,?,?,?)",
                  (mid, session_id, seq, turn_id, sender, content, ts, json.dumps(meta, default=str)))
        if sender == "user":
            first = c.execute("SELECT COUNT(*) FROM messages WHERE session_id = ?", (session_id,)).fetchone()[0] == 1
            if first:
                c.execute("UPDATE sessions SET title = ? WHERE id = ? AND title = ?",
                          (title_from(content) or DEFAULT_TITLE, session_id, DEFAULT_TITLE))
        c.execute("UPDATE sessions SET updated_at = ? WHERE id = ?", (ts, session_id))
        return c.execute("SELECT * FROM messages WHERE id = ?", (mid,)).fetchone()

    # -- indexes ---------------------------------------------------------------
    def create_index(self, name: str, description: str = "", metadata: dict[str, Any] | None = None,
                     session_id: str | None = None, index_id: str | None = None) -> dict[str, Any]:
        """`index_id` names an index the RAG API already has (one built from the command line)."""
        iid, ts = index_id or new_id(), now()
        with self._write() as c:
            c.execute("INSERT INTO indexes (id, name, description, created_at, updated_at, vector_table_name, "
                      "metadata, session_id) VALUES (?,?,?,?,?,?,?,?)",
                      (iid, name, description, ts, ts, f"idx_{iid}", json.dumps(metadata or {}), session_id))
        return self.get_index(iid)  # type: ignore[return-value]

    def get_index(self, index_id: str) -> dict[str, Any] | None:
        with self._conn() as c:
            row = c.execute("SELECT * FROM indexes WHERE id = ?", (index_id,)).fetchone()
            if row is None:
                return None
            docs = c.execute("SELECT * FROM index_documents WHERE index_id = ? ORDER BY created_at, filename",
                             (index_id,)).fetchall()
        return _index(row, [_document(d) for d in docs])

    def list_indexes(self) -> list[dict[str, Any]]:
        with self._conn() as c:
            rows = c.execute("SELECT * FROM indexes ORDER BY created_at DESC, id").fetchall()
            docs = c.execute("SELECT * FROM index_documents WHERE index_id IS NOT NULL "
                             "ORDER BY created_at, filename").fetchall()
        by_index: dict[str, list[dict[str, Any]]] = {}
        for d in docs:
            by_index.setdefault(d["index_id"], []).append(_document(d))
        return [_index(r, by_index.get(r["id"], [])) for r in rows]

    def update_index_metadata(self, index_id: str, updates: dict[str, Any]) -> None:
        with self._write() as c:
            row = c.execute("SELECT metadata FROM indexes WHERE id = ?", (index_id,)).fetchone()
            if row is None:
                return
            meta = {**json.loads(row["metadata"]), **updates}
            c.execute("UPDATE indexes SET metadata = ?, updated_at = ? WHERE id = ?",
                      (json.dumps(meta, default=str), now(), index_id))

    def delete_index(self, index_id: str) -> list[str] | None:
        """Delete the index rows (documents, links, jobs cascade); returns the documents' stored paths."""
        with self._write() as c:
            if not c.execute("SELECT 1 FROM indexes WHERE id = ?", (index_id,)).fetchone():
                return None
            rows = c.execute("SELECT stored_path FROM index_documents WHERE index_id = ?", (index_id,)).fetchall()
            c.execute("DELETE FROM indexes WHERE id = ?", (index_id,))
        return [r["stored_path"] for r in rows]

    # -- documents -------------------------------------------------------------
    def add_document(self, *, filename: str, stored_path: str, sha256: str, size: int,
                     index_id: str | None = None, session_id: str | None = None) -> dict[str, Any]:
        """Record an uploaded file once per owner (the same bytes and name upload to the same path)."""
        if index_id is None and session_id is None:
            raise ValueError("a document belongs to an index or a session")
        with self._write() as c:
            owner_col, owner = ("index_id", index_id) if index_id else ("session_id", session_id)
            extra = "" if index_id else " AND index_id IS NULL"
            row = c.execute(f"SELECT * FROM index_documents WHERE {owner_col} = ? AND stored_path = ?{extra}",
                            (owner, stored_path)).fetchone()
            if row is None:
                did = new_id()
                c.execute("INSERT INTO index_documents (id, index_id, session_id, filename, stored_path, sha256, "
                          "size, created_at) VALUES (?,?,?,?,?,?,?,?)",
                          (did, index_id, session_id, filename, stored_path, sha256, size, now()))
                row = c.execute("SELECT * FROM index_documents WHERE id = ?", (did,)).fetchone()
        return _document(row)

    def session_documents(self, session_id: str) -> list[dict[str, Any]]:
        with self._conn() as c:
            rows = c.execute("SELECT * FROM index_documents WHERE session_id = ? ORDER BY created_at, filename",
                             (session_id,)).fetchall()
        return [_document(r) for r in rows]

    def assign_pending_documents(self, session_id: str, index_id: str) -> int:
        with self._write() as c:
            cur = c.execute("UPDATE index_documents SET index_id = ? WHERE session_id = ? AND index_id IS NULL",
                            (index_id, session_id))
        return cur.rowcount

    def set_documents_status(self, index_id: str, status: str) -> None:
        with self._write() as c:
            c.execute("UPDATE index_documents SET status = ? WHERE index_id = ?", (status, index_id))

    def set_document_result(self, document_id: str, status: str, page_count: int | None,
                            error: str | None) -> None:
        """One document's build outcome; a page count the build did not report keeps the last known one."""
        with self._write() as c:
            c.execute("UPDATE index_documents SET status = ?, page_count = COALESCE(?, page_count), error = ? "
                      "WHERE id = ?", (status, page_count, error, document_id))

    def find_document(self, ident: str) -> dict[str, Any] | None:
        """A document by its id, or by its content sha256 (what citations carry)."""
        with self._conn() as c:
            row = c.execute("SELECT * FROM index_documents WHERE id = ? OR sha256 = ? "
                            "ORDER BY (id = ?) DESC, created_at DESC LIMIT 1", (ident, ident, ident)).fetchone()
        return _document(row) if row else None

    # -- links and jobs --------------------------------------------------------
    def link(self, session_id: str, index_id: str) -> bool:
        with self._write() as c:
            cur = c.execute("INSERT OR IGNORE INTO session_indexes (session_id, index_id, linked_at) VALUES (?,?,?)",
                            (session_id, index_id, now()))
        return cur.rowcount > 0

    def unlink(self, session_id: str, index_id: str) -> bool:
        with self._write() as c:
            cur = c.execute("DELETE FROM session_indexes WHERE session_id = ? AND index_id = ?", (session_id, index_id))
        return cur.rowcount > 0

    def session_index_ids(self, session_id: str) -> list[str]:
        with self._conn() as c:
            rows = c.execute("SELECT index_id FROM session_indexes WHERE session_id = ? ORDER BY linked_at, index_id",
                             (session_id,)).fetchall()
        return [r["index_id"] for r in rows]

    def add_job(self, job_id: str, index_id: str, state: str) -> None:
        ts = now()
        with self._write() as c:
            c.execute("INSERT OR REPLACE INTO index_jobs (job_id, index_id, state, created_at, updated_at) "
                      "VALUES (?,?,?,?,?)", (job_id, index_id, state, ts, ts))

    def get_job(self, job_id: str) -> dict[str, Any] | None:
        with self._conn() as c:
            row = c.execute("SELECT * FROM index_jobs WHERE job_id = ?", (job_id,)).fetchone()
        return dict(row) if row else None

    def update_job(self, job_id: str, state: str) -> None:
        with self._write() as c:
            c.execute("UPDATE index_jobs SET state = ?, updated_at = ? WHERE job_id = ?", (state, now(), job_id))

    def most_used_model(self) -> str | None:
        with self._conn() as c:
            row = c.execute("SELECT model_used, COUNT(*) AS n FROM sessions WHERE model_used != '' "
                            "GROUP BY model_used ORDER BY n DESC LIMIT 1").fetchone()
        return row["model_used"] if row else None

    def stats(self) -> dict[str, int]:
        with self._conn() as c:
            return {name: int(c.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])
                    for name, table in (("sessions", "sessions"), ("messages", "messages"),
                                        ("indexes", "indexes"), ("documents", "index_documents"))}


def _message(row: sqlite3.Row) -> dict[str, Any]:
    return {"id": row["id"], "session_id": row["session_id"], "content": row["content"], "sender": row["sender"],
            "timestamp": row["timestamp"], "turn_id": row["turn_id"], "metadata": json.loads(row["metadata"])}


def _document(row: sqlite3.Row) -> dict[str, Any]:
    return {"id": row["id"], "index_id": row["index_id"], "session_id": row["session_id"],
            "filename": row["filename"], "stored_path": row["stored_path"], "sha256": row["sha256"],
            "size": row["size"], "status": row["status"], "page_count": row["page_count"], "error": row["error"],
            "created_at": row["created_at"]}


def _index(row: sqlite3.Row, documents: list[dict[str, Any]]) -> dict[str, Any]:
    return {"id": row["id"], "name": row["name"], "description": row["description"],
            "created_at": row["created_at"], "updated_at": row["updated_at"],
            "vector_table_name": row["vector_table_name"], "metadata": json.loads(row["metadata"]),
            "session_id": row["session_id"], "documents": documents, "document_count": len(documents),
            # the searchable pages: a failed file's pages are listed on it but not in the total
            "page_count": sum(d["page_count"] or 0 for d in documents if d["status"] != "failed")}
