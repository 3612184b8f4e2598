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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from backend.audit import AuditRows
from backend.migrations import migrate
from backend.store_accounts import AccountRows
from backend.store_feedback import FeedbackRows
from backend.store_library import LibraryRows, new_id, now
from backend.store_sharing import SharingRows
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


def title_from(message: str) -> str:
    words = " ".join(message.split())
    return words if len(words) <= TITLE_CHARS else words[: TITLE_CHARS - 1].rstrip() + "…"


class Store(LibraryRows, AccountRows, SharingRows, AuditRows, FeedbackRows):
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
    _SESSION_SQL = ("SELECT s.id, s.title, s.created_at, s.updated_at, s.model_used, (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id) AS message_count "
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

    def import_session(self, session_id: str, title: str, created_at: str, updated_at: str,
                       model: str) -> bool:
        """A session with its own id and times (a migration); False when that id is here already."""
        with self._write() as c:
            cur = c.execute("INSERT OR IGNORE INTO sessions (id, title, created_at, updated_at, model_used) "
                            "VALUES (?,?,?,?,?)", (session_id, title, created_at, updated_at, model))
        return cur.rowcount == 1

    def import_message(self, session_id: str, turn_id: str, sender: str, content: str, timestamp: str,
                       metadata: dict[str, Any]) -> bool:
        """One message of a migrated conversation, keeping its time; False when its turn has it already."""
        with self._write() as c:
            if c.execute("SELECT 1 FROM messages WHERE turn_id = ? AND sender = ?", (turn_id, sender)).fetchone():
                return False
            seq = c.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM messages WHERE session_id = ?",
                            (session_id,)).fetchone()[0]
            c.execute("INSERT INTO messages (id, session_id, seq, turn_id, sender, content, timestamp, metadata) "
                      "VALUES (?,?,?,?,?,?,?,?)", (new_id(), session_id, seq, turn_id, sender, content, timestamp,
                                                   json.dumps(dict(metadata, turn_id=turn_id), default=str)))
        return True

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
