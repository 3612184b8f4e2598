"""Account rows (part of `Store`): users, login sessions, personal API tokens, failed-login counters.

Secrets are never stored: a login session and an API token are kept as the SHA-256 of a 256-bit
random value (a fast hash is right for random tokens; passwords use argon2, backend/passwords.py).
"""

from __future__ import annotations

import hashlib
import sqlite3
from datetime import datetime, timedelta, timezone
from typing import Any

from backend.store_library import StoreRows, new_id, now
from common.errors import DomainError

ROLES = ("admin", "editor", "viewer")


class UserExistsError(DomainError, ValueError):
    status, code = 409, "user_exists"


def token_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def public_user(row: sqlite3.Row | dict[str, Any]) -> dict[str, Any]:
    """A user as clients see it (never the hash)."""
    return {"id": row["id"], "username": row["username"], "role": row["role"], "disabled": bool(row["disabled"]),
            "created_at": row["created_at"], "last_login_at": row["last_login_at"]}


class AccountRows(StoreRows):
    """Mixed into `Store`, which provides `_conn()` and `_write()`."""

    # -- users -----------------------------------------------------------------
    def has_users(self) -> bool:
        with self._conn() as c:
            return c.execute("SELECT EXISTS (SELECT 1 FROM users)").fetchone()[0] == 1

    def create_user(self, username: str, role: str, password_hash: str) -> dict[str, Any]:
        """A new user; the very first one (an admin) is given every row made before accounts existed."""
        if role not in ROLES:
            raise ValueError(f"role must be one of {', '.join(ROLES)}")
        uid = new_id()
        with self._write() as c:
            if c.execute("SELECT 1 FROM users WHERE username = ?", (username,)).fetchone():
                raise UserExistsError(f"a user named {username!r} exists already")
            first = c.execute("SELECT EXISTS (SELECT 1 FROM users)").fetchone()[0] == 0
            c.execute("INSERT INTO users (id, username, role, password_hash, created_at) VALUES (?,?,?,?,?)",
                      (uid, username, role, password_hash, now()))
            if first and role == "admin":
                c.execute("UPDATE sessions SET owner_id = ? WHERE owner_id IS NULL", (uid,))
                c.execute("UPDATE indexes SET owner_id = ? WHERE owner_id IS NULL", (uid,))
        return self.get_user(uid)  # type: ignore[return-value]

    def get_user(self, user_id: str) -> dict[str, Any] | None:
        with self._conn() as c:
            row = c.execute("SELECT * FROM users WHERE id = ?", (user_id,)).fetchone()
        return dict(row) if row else None

    def user_by_name(self, username: str) -> dict[str, Any] | None:
        with self._conn() as c:
            row = c.execute("SELECT * FROM users WHERE username = ?", (username,)).fetchone()
        return dict(row) if row else None

    def list_users(self) -> list[dict[str, Any]]:
        with self._conn() as c:
            rows = c.execute("SELECT * FROM users ORDER BY username").fetchall()
        return [public_user(r) for r in rows]

    def update_user(self, user_id: str, *, role: str | None = None, disabled: bool | None = None,
                    password_hash: str | None = None) -> dict[str, Any] | None:
        """Change a user; disabling one or changing the password ends their login sessions."""
        with self._write() as c:
            if c.execute("SELECT 1 FROM users WHERE id = ?", (user_id,)).fetchone() is None:
                return None
            if role is not None:
                c.execute("UPDATE users SET role = ? WHERE id = ?", (role, user_id))
            if disabled is not None:
                c.execute("UPDATE users SET disabled = ? WHERE id = ?", (int(disabled), user_id))
            if password_hash is not None:
                c.execute("UPDATE users SET password_hash = ? WHERE id = ?", (password_hash, user_id))
            if disabled or password_hash is not None:
                c.execute("DELETE FROM auth_sessions WHERE user_id = ?", (user_id,))
            if role is not None or disabled is not None or password_hash is not None:
                _bump_epoch(c, user_id)  # grants already issued stop working (rag_system/api/grant_epochs.py)
        return self.get_user(user_id)

    def count_admins(self) -> int:
        with self._conn() as c:
            return int(c.execute("SELECT COUNT(*) FROM users WHERE role = 'admin' AND disabled = 0").fetchone()[0])

    # -- login sessions ----------------------------------------------------------
    def open_login(self, user_id: str, secret: str, csrf: str, hours: float, address: str) -> None:
        ts = datetime.now(timezone.utc)
        expires = (ts + timedelta(hours=hours)).isoformat(timespec="seconds")
        with self._write() as c:
            c.execute("INSERT INTO auth_sessions (id_hash, user_id, csrf_token, created_at, expires_at, address) "
                      "VALUES (?,?,?,?,?,?)", (token_hash(secret), user_id, csrf, ts.isoformat(), expires, address))
            c.execute("UPDATE users SET last_login_at = ? WHERE id = ?", (ts.isoformat(), user_id))
            c.execute("DELETE FROM auth_sessions WHERE expires_at < ?", (ts.isoformat(timespec="seconds"),))

    def login_by_secret(self, secret: str) -> tuple[dict[str, Any], str] | None:
        """(user, csrf token) of a live login session, or None (unknown, expired, or the user is disabled)."""
        with self._conn() as c:
            row = c.execute("SELECT u.*, a.csrf_token, a.expires_at FROM auth_sessions a JOIN users u "
                            "ON u.id = a.user_id WHERE a.id_hash = ?", (token_hash(secret),)).fetchone()
        if row is None or row["disabled"] or row["expires_at"] < datetime.now(timezone.utc).isoformat("T", "seconds"):
            return None
        return dict(row), row["csrf_token"]

    def close_login(self, secret: str) -> None:
        with self._write() as c:
            c.execute("DELETE FROM auth_sessions WHERE id_hash = ?", (token_hash(secret),))

    # -- API tokens --------------------------------------------------------------
    def add_token(self, user_id: str, name: str, secret: str) -> dict[str, Any]:
        tid = new_id()
        with self._write() as c:
            c.execute("INSERT INTO api_tokens (id, user_id, name, token_hash, created_at) VALUES (?,?,?,?,?)",
                      (tid, user_id, name, token_hash(secret), now()))
        return next(t for t in self.list_tokens(user_id) if t["id"] == tid)

    def list_tokens(self, user_id: str | None = None) -> list[dict[str, Any]]:
        """Tokens (never their value) of one user, or of everyone for an admin page."""
        where, args = ("WHERE t.user_id = ?", (user_id,)) if user_id else ("", ())
        with self._conn() as c:
            rows = c.execute("SELECT t.id, t.user_id, u.username, t.name, t.created_at, t.last_used_at "
                             f"FROM api_tokens t JOIN users u ON u.id = t.user_id {where} ORDER BY t.created_at",
                             args).fetchall()
        return [dict(r) for r in rows]

    def user_by_token(self, secret: str) -> dict[str, Any] | None:
        with self._write() as c:
            row = c.execute("SELECT u.*, t.id AS token_id FROM api_tokens t JOIN users u ON u.id = t.user_id "
                            "WHERE t.token_hash = ?", (token_hash(secret),)).fetchone()
            if row is not None:
                c.execute("UPDATE api_tokens SET last_used_at = ? WHERE id = ?", (now(), row["token_id"]))
        return dict(row) if row is not None and not row["disabled"] else None

    def revoke_token(self, token_id: str, user_id: str | None) -> bool:
        """Delete a token (of `user_id`, or anyone's when None: an admin)."""
        with self._write() as c:
            if user_id is None:
                cur = c.execute("DELETE FROM api_tokens WHERE id = ?", (token_id,))
            else:
                cur = c.execute("DELETE FROM api_tokens WHERE id = ? AND user_id = ?", (token_id, user_id))
        return cur.rowcount > 0

    # -- grant revocation epochs ----------------------------------------------------
    def grant_epoch(self, user_id: str) -> int:
        """The user's epoch plus everyone's: both only grow, so any bump raises the sum."""
        with self._conn() as c:
            row = c.execute("SELECT COALESCE(SUM(epoch), 0) FROM grant_epochs WHERE subject IN ('*', ?)",
                            (user_id,)).fetchone()
        return int(row[0])

    def bump_grant_epoch(self, subject: str) -> None:
        """Invalidate the RAG API grants of `subject` (a user id, or `*` for every user)."""
        with self._write() as c:
            _bump_epoch(c, subject)

    # -- failed logins -------------------------------------------------------------
    def locked_for(self, subjects: list[str], at: float) -> float:
        """Seconds until the longest lock among `subjects` ends (0 when none is locked)."""
        marks = ",".join("?" * len(subjects))
        with self._conn() as c:
            row = c.execute(f"SELECT MAX(locked_until) FROM login_failures WHERE subject IN ({marks})",
                            subjects).fetchone()
        return max(0.0, (row[0] or 0.0) - at)

    def record_failure(self, subject: str, at: float, limit: int, window_s: float, lock_s: float) -> int:
        """Count a failed login of `subject`; at `limit` failures within `window_s` it is locked for `lock_s`."""
        with self._write() as c:
            row = c.execute("SELECT failures, last_at FROM login_failures WHERE subject = ?", (subject,)).fetchone()
            failures = 1 if row is None or at - row["last_at"] > window_s else row["failures"] + 1
            locked = at + lock_s if failures >= limit else 0.0
            c.execute("INSERT INTO login_failures (subject, failures, last_at, locked_until) VALUES (?,?,?,?) "
                      "ON CONFLICT(subject) DO UPDATE SET failures = excluded.failures, last_at = excluded.last_at, "
                      "locked_until = MAX(login_failures.locked_until, excluded.locked_until)",
                      (subject, 0 if locked else failures, at, locked))
        return failures

    def clear_failures(self, subject: str) -> None:
        with self._write() as c:
            c.execute("DELETE FROM login_failures WHERE subject = ?", (subject,))


def _bump_epoch(conn: sqlite3.Connection, subject: str) -> None:
    conn.execute("INSERT INTO grant_epochs (subject, epoch) VALUES (?, 1) "
                 "ON CONFLICT(subject) DO UPDATE SET epoch = epoch + 1", (subject,))
