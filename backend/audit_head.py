"""The audit log's head anchor: the newest row's `seq` and `hash`, kept outside `audit_log`.

The hash chain alone cannot show that the newest rows were deleted: what is left is a shorter chain
that verifies. So every append also writes, in the same transaction, a one-row `audit_head` table
holding the new row's seq and hash with an HMAC-SHA256 under the grant secret (common/grants.py).
`verify` then knows where the chain must end: a head beyond the last row means rows were cut off,
a head whose MAC fails means someone rewrote it. In single-user mode there is no secret, so the
anchor is unsigned (`mac` empty): it still catches a truncation made with SQL alone, not one by
someone who also rewrites the anchor; once a secret exists an unsigned anchor is itself refused.
An append after a truncation continues the numbering from the head, so the gap stays visible.
"""

from __future__ import annotations

import hashlib
import hmac
import sqlite3
from dataclasses import dataclass


@dataclass(frozen=True)
class Head:
    seq: int
    hash: str
    mac: str


def sign(key: bytes | None, seq: int, row_hash: str) -> str:
    if key is None:
        return ""
    return hmac.new(key, f"docent audit head v1:{seq}:{row_hash}".encode(), hashlib.sha256).hexdigest()


def read(conn: sqlite3.Connection) -> Head | None:
    row = conn.execute("SELECT seq, hash, mac FROM audit_head WHERE id = 1").fetchone()
    return Head(int(row[0]), str(row[1]), str(row[2])) if row else None


def write(conn: sqlite3.Connection, key: bytes | None, seq: int, row_hash: str) -> None:
    conn.execute("INSERT INTO audit_head (id, seq, hash, mac) VALUES (1, ?, ?, ?) ON CONFLICT(id) DO UPDATE "
                 "SET seq = excluded.seq, hash = excluded.hash, mac = excluded.mac",
                 (seq, row_hash, sign(key, seq, row_hash)))


def problem(head: Head | None, key: bytes | None, last_seq: int, last_hash: str) -> tuple[int, str] | None:
    """(row, why) when the chain's end and the anchor disagree; None when they agree."""
    if head is None:
        return (last_seq, "the head anchor is missing (it is written with every row; a database upgraded "
                           "from before it gets one with its next audited action)") if last_seq else None
    if key is not None:
        if not head.mac:
            return head.seq, "the head anchor is not signed with the grant secret"
        if not hmac.compare_digest(head.mac, sign(key, head.seq, head.hash)):
            return head.seq, "the head anchor's signature does not match (it was rewritten)"
    if head.seq > last_seq:
        gone = head.seq - last_seq
        return head.seq, (f"the newest {gone} row{'s' if gone > 1 else ''} (up to row {head.seq}) "
                          f"{'were' if gone > 1 else 'was'} deleted: the log ends at row {last_seq}")
    if head.seq < last_seq or head.hash != last_hash:
        return last_seq, "the newest row does not match the head anchor"
    return None
