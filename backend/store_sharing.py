"""Who owns what and who may use it (part of `Store`): session and index owners, index share lists.

A share names a user id, or `*` for everyone, with `read` (ask, open documents) or `write` (also
upload and build). Owners and admins need no share. Decisions live in backend/access.py; this
module only reads and writes the rows.
"""

from __future__ import annotations

from typing import Any

from backend.store_library import StoreRows, now
from common.document_ids import file_id

EVERYONE = "*"
ACCESS = ("read", "write")


class SharingRows(StoreRows):
    """Mixed into `Store`, which provides `_conn()` and `_write()`."""

    def set_owner(self, table: str, row_id: str, user_id: str | None) -> None:
        assert table in ("sessions", "indexes")
        with self._write() as c:
            c.execute(f"UPDATE {table} SET owner_id = ? WHERE id = ?", (user_id, row_id))

    def owner_of(self, table: str, row_id: str) -> tuple[bool, str | None]:
        """(whether the row exists, its owner id)."""
        assert table in ("sessions", "indexes")
        with self._conn() as c:
            row = c.execute(f"SELECT owner_id FROM {table} WHERE id = ?", (row_id,)).fetchone()
        return (row is not None, row["owner_id"] if row else None)

    def session_ids_of(self, user_id: str) -> set[str]:
        with self._conn() as c:
            rows = c.execute("SELECT id FROM sessions WHERE owner_id = ?", (user_id,)).fetchall()
        return {r["id"] for r in rows}

    def share_access(self, index_id: str, user_id: str) -> str | None:
        """The best access a share gives `user_id` on an index (`write` > `read`), or None."""
        with self._conn() as c:
            rows = c.execute("SELECT access FROM index_shares WHERE index_id = ? AND grantee IN (?, ?)",
                             (index_id, user_id, EVERYONE)).fetchall()
        found = {r["access"] for r in rows}
        return "write" if "write" in found else ("read" if found else None)

    def list_shares(self, index_id: str) -> list[dict[str, Any]]:
        with self._conn() as c:
            rows = c.execute("SELECT s.grantee, s.access, s.created_at, u.username FROM index_shares s "
                             "LEFT JOIN users u ON u.id = s.grantee WHERE s.index_id = ? ORDER BY s.created_at",
                             (index_id,)).fetchall()
        return [{"grantee": r["grantee"], "username": r["username"] or ("everyone" if r["grantee"] == EVERYONE
                                                                         else None),
                 "access": r["access"], "created_at": r["created_at"]} for r in rows]

    def put_share(self, index_id: str, grantee: str, access: str) -> None:
        assert access in ACCESS
        with self._write() as c:
            c.execute("INSERT INTO index_shares (index_id, grantee, access, created_at) VALUES (?,?,?,?) "
                      "ON CONFLICT(index_id, grantee) DO UPDATE SET access = excluded.access",
                      (index_id, grantee, access, now()))

    def remove_share(self, index_id: str, grantee: str) -> bool:
        with self._write() as c:
            cur = c.execute("DELETE FROM index_shares WHERE index_id = ? AND grantee = ?", (index_id, grantee))
        return cur.rowcount > 0

    def documents_matching(self, ident: str) -> list[dict[str, Any]]:
        """Every stored document with this id or sha256 (a message's `<sha256>-<n>` as its file), with
        its index and session owners."""
        ident = file_id(ident)
        with self._conn() as c:
            rows = c.execute("SELECT d.id, d.index_id, d.session_id, i.owner_id AS index_owner, "
                             "s.owner_id AS session_owner FROM index_documents d "
                             "LEFT JOIN indexes i ON i.id = d.index_id LEFT JOIN sessions s ON s.id = d.session_id "
                             "WHERE d.id = ? OR d.sha256 = ? ORDER BY (d.id = ?) DESC, d.created_at DESC",
                             (ident, ident, ident)).fetchall()
        return [dict(r) for r in rows]
