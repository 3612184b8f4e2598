"""The audit log (part of `Store`): who did what, when, from where; each row chained to the one before.

A row's `hash` is SHA-256 over the previous row's hash and the row's own fields, so changing,
inserting or deleting a row breaks the chain from there on, and `python -m backend audit verify`
(`verify_chain`) names the first row that does not match. Triggers refuse UPDATE and DELETE through
SQL; the chain catches what bypasses them (another tool, the file edited by hand). Rows are appended
in the writer's `BEGIN IMMEDIATE` transaction, so two appends never share a previous hash. The
same transaction moves the head anchor (backend/audit_head.py), which is how deleting the newest
rows is detected.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from backend import audit_head
from backend.store_library import StoreRows, now

GENESIS = "0" * 64
ACTIONS = ("login", "login_failed", "logout", "upload", "build", "delete", "share", "unshare", "chat", "verify",
           "user_created", "user_changed", "token_created", "token_revoked", "feedback", "delete_document")


def row_hash(prev: str, seq: int, at: str, actor: str, action: str, target: str, address: str, detail: str) -> str:
    text = json.dumps([prev, seq, at, actor, action, target, address, detail], ensure_ascii=False,
                      separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class ChainReport:
    rows: int
    ok: bool
    first_bad_seq: int | None = None
    reason: str = ""


class AuditRows(StoreRows):
    """Mixed into `Store`, which provides `_conn()` and `_write()`."""

    _audit_key_source: Callable[[], bytes | None] | None = None

    def set_audit_key(self, source: Callable[[], bytes | None]) -> None:
        """Where the key that signs the head anchor comes from (the grant secret; None in single-user mode)."""
        self._audit_key_source = source

    def _audit_key(self) -> bytes | None:
        return self._audit_key_source() if self._audit_key_source is not None else None

    def audit(self, actor: str, action: str, target: str = "", address: str = "",
              detail: Mapping[str, Any] | None = None) -> None:
        assert action in ACTIONS, action
        text = json.dumps(dict(detail or {}), ensure_ascii=False, sort_keys=True, default=str)
        key = self._audit_key()
        with self._write() as c:
            last = c.execute("SELECT seq, hash FROM audit_log ORDER BY seq DESC LIMIT 1").fetchone()
            seq, prev = (last["seq"] + 1, last["hash"]) if last else (1, GENESIS)
            head = audit_head.read(c)
            seq = max(seq, head.seq + 1) if head else seq  # rows cut off before stay a visible gap
            at = now()
            digest = row_hash(prev, seq, at, actor, action, target, address, text)
            c.execute("INSERT INTO audit_log (seq, at, actor, action, target, address, detail, prev_hash, hash) "
                      "VALUES (?,?,?,?,?,?,?,?,?)", (seq, at, actor, action, target, address, text, prev, digest))
            audit_head.write(c, key, seq, digest)

    def audit_page(self, before: int | None, limit: int) -> list[dict[str, Any]]:
        """Newest first; `before` is the `seq` to page back from."""
        with self._conn() as c:
            rows = c.execute("SELECT * FROM audit_log WHERE seq < ? ORDER BY seq DESC LIMIT ?",
                             (before if before is not None else 2**62, limit)).fetchall()
        return [{**dict(r), "detail": json.loads(r["detail"])} for r in rows]

    def _audit_rows(self, conn: sqlite3.Connection) -> Iterator[sqlite3.Row]:
        yield from conn.execute("SELECT * FROM audit_log ORDER BY seq")

    def verify_chain(self) -> ChainReport:
        prev, expected_seq, count = GENESIS, 1, 0
        with self._conn() as c:
            for row in self._audit_rows(c):
                count += 1
                if row["seq"] != expected_seq:
                    return ChainReport(count, False, expected_seq, f"row {expected_seq} is missing")
                if row["prev_hash"] != prev:
                    return ChainReport(count, False, row["seq"], "its previous-hash does not match the row before")
                want = row_hash(prev, row["seq"], row["at"], row["actor"], row["action"], row["target"],
                                row["address"], row["detail"])
                if want != row["hash"]:
                    return ChainReport(count, False, row["seq"], "its contents do not match its hash")
                prev, expected_seq = row["hash"], expected_seq + 1
            head = audit_head.read(c)
        key = self._audit_key()
        bad = audit_head.problem(head, key, expected_seq - 1, prev)
        if bad is not None:
            return ChainReport(count, False, bad[0], bad[1])
        unchecked = head is not None and head.mac and key is None
        return ChainReport(count, True, reason="the head anchor's signature was not checked: no grant secret "
                                               "here" if unchecked else "")
