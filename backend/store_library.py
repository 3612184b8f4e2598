"""The library's rows: indexes, their documents, session links and build jobs (part of `Store`).

Split from `backend/store.py` (conversations) on the seam between what a user says and what a
user has; both use the store's one connection pool and write transactions.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from contextlib import AbstractContextManager
from datetime import datetime, timezone
from typing import Any

from common.document_ids import file_id


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def new_id() -> str:
    return uuid.uuid4().hex


class StoreRows:
    """A part of `Store`, which provides `_conn()` (a reading connection) and `_write()` (the writer's transaction)."""

    def _conn(self) -> AbstractContextManager[sqlite3.Connection]:
        raise NotImplementedError

    def _write(self) -> AbstractContextManager[sqlite3.Connection]:
        raise NotImplementedError


class LibraryRows(StoreRows):
    """Mixed into `Store`, which provides `_conn()` and `_write()`."""

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
            elif index_id:  # uploaded again: it is the newest version of its name again
                c.execute("UPDATE index_documents SET created_at = ? WHERE id = ?", (now(), row["id"]))
                row = c.execute("SELECT * FROM index_documents WHERE id = ?", (row["id"],)).fetchone()
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

    def index_document(self, index_id: str, ident: str) -> dict[str, Any] | None:
        """A document of this index by its id or its content sha256 (the newest upload of that content)."""
        with self._conn() as c:
            row = c.execute("SELECT * FROM index_documents WHERE index_id = ? AND (id = ? OR sha256 = ?) "
                            "ORDER BY (id = ?) DESC, created_at DESC LIMIT 1",
                            (index_id, ident, ident, ident)).fetchone()
        return _document(row) if row else None

    def remove_documents(self, document_ids: list[str]) -> list[str]:
        """Delete these document rows; returns the stored paths no other row refers to (safe to delete)."""
        with self._write() as c:
            paths = [r["stored_path"] for r in c.execute(
                f"SELECT stored_path FROM index_documents WHERE id IN ({','.join('?' * len(document_ids))})",
                document_ids).fetchall()] if document_ids else []
            for did in document_ids:
                c.execute("DELETE FROM index_documents WHERE id = ?", (did,))
            return [p for p in dict.fromkeys(paths)
                    if c.execute("SELECT 1 FROM index_documents WHERE stored_path = ?", (p,)).fetchone() is None]

    def find_document(self, ident: str) -> dict[str, Any] | None:
        """A document by its id, or by its content sha256 (what citations carry; a mailbox's message,
        `<sha256>-<n>`, is found as its file)."""
        ident = file_id(ident)
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


def _document(row: sqlite3.Row) -> dict[str, Any]:
    return {"id": row["id"], "index_id": row["index_id"], "session_id": row["session_id"],
            "filename": row["filename"], "stored_path": row["stored_path"], "sha256": row["sha256"],
            "size": row["size"], "status": row["status"], "page_count": row["page_count"], "error": row["error"],
            "created_at": row["created_at"]}


def _index(row: sqlite3.Row, documents: list[dict[str, Any]]) -> dict[str, Any]:
    # A file uploaded again under the same name replaces the older upload at the next build (its
    # chunks go in that build: backend/library.py); until then the older one is listed as `replaced`.
    latest = {d["filename"]: d["id"] for d in documents}  # in upload order: the last one wins
    for d in documents:
        d["replaced"] = latest[d["filename"]] != d["id"]
    current = [d for d in documents if not d["replaced"]]
    return {"id": row["id"], "name": row["name"], "description": row["description"],
            "created_at": row["created_at"], "updated_at": row["updated_at"],
            "vector_table_name": row["vector_table_name"], "metadata": json.loads(row["metadata"]),
            "session_id": row["session_id"], "documents": documents, "document_count": len(current),
            # the searchable pages: a failed file's pages are listed on it but not in the total
            "page_count": sum(d["page_count"] or 0 for d in current if d["status"] != "failed")}
