"""Ratings of answers (part of `Store`): one per person and answer, kept with the turn they rate.

A rating is the evaluation of tomorrow: the export (backend/feedback_export.py) turns rated turns
into rows `eval.run_answers` reads. So the row keeps the turn as it was rated — question, answer,
citations, answer source, indexes, options — and a changed mind replaces the rating in place
(`updated_at` moves, `created_at` stays). Who may rate what is decided in backend/access.py.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from backend.store_library import StoreRows, now

RATINGS = ("up", "down")


class FeedbackRows(StoreRows):
    """Mixed into `Store`, which provides `_conn()` and `_write()`."""

    def get_message(self, message_id: str) -> dict[str, Any] | None:
        """One message with its session id, or None."""
        with self._conn() as c:
            row = c.execute("SELECT * FROM messages WHERE id = ?", (message_id,)).fetchone()
        if row is None:
            return None
        return {"id": row["id"], "session_id": row["session_id"], "turn_id": row["turn_id"],
                "sender": row["sender"], "content": row["content"], "timestamp": row["timestamp"],
                "metadata": json.loads(row["metadata"])}

    def rate(self, message_id: str, rater: str, rating: str, comment: str,
             turn: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        """Store or change `rater`'s rating of an answer; returns (the row, whether it replaced one)."""
        assert rating in RATINGS
        ts = now()
        with self._write() as c:
            before = c.execute("SELECT 1 FROM feedback WHERE message_id = ? AND rater = ?",
                               (message_id, rater)).fetchone()
            c.execute("INSERT INTO feedback (message_id, rater, rating, comment, turn, created_at, updated_at) "
                      "VALUES (?,?,?,?,?,?,?) ON CONFLICT (message_id, rater) DO UPDATE SET rating = excluded.rating, "
                      "comment = excluded.comment, turn = excluded.turn, updated_at = excluded.updated_at",
                      (message_id, rater, rating, comment, json.dumps(turn, default=str), ts, ts))
            row = c.execute("SELECT * FROM feedback WHERE message_id = ? AND rater = ?",
                            (message_id, rater)).fetchone()
        return _feedback(row), before is not None

    def ratings_for_session(self, session_id: str, rater: str) -> dict[str, dict[str, Any]]:
        """message id -> `rater`'s rating, for the answers of one conversation."""
        with self._conn() as c:
            rows = c.execute("SELECT f.* FROM feedback f JOIN messages m ON m.id = f.message_id "
                             "WHERE m.session_id = ? AND f.rater = ?", (session_id, rater)).fetchall()
        return {r["message_id"]: _feedback(r) for r in rows}

    def all_feedback(self, rater: str | None = None) -> list[dict[str, Any]]:
        """Every rating (one person's when `rater` is given), oldest change first."""
        sql = "SELECT f.*, m.session_id FROM feedback f JOIN messages m ON m.id = f.message_id"
        args: tuple[str, ...] = ()
        if rater is not None:
            sql, args = sql + " WHERE f.rater = ?", (rater,)
        with self._conn() as c:
            rows = c.execute(sql + " ORDER BY f.updated_at, f.message_id", args).fetchall()
        return [{**_feedback(r), "session_id": r["session_id"]} for r in rows]


def _feedback(row: sqlite3.Row) -> dict[str, Any]:
    return {"message_id": row["message_id"], "rater": row["rater"], "rating": row["rating"],
            "comment": row["comment"], "turn": json.loads(row["turn"]), "created_at": row["created_at"],
            "updated_at": row["updated_at"]}
