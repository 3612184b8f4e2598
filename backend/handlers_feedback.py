"""Feedback on answers: `POST /messages/<ai_message_id>/feedback` and `GET /feedback` (the export).

A wrong answer needs somewhere to go. A person rates an answer up or down, with an optional
comment; one rating per person and answer, which they may change. The rating is stored with the
turn it rates (backend/store_feedback.py) and becomes an evaluation row in the export
(backend/feedback_export.py). Only an answer the caller may read can be rated (backend/access.py
checks the message's conversation); the audit log records each rating.
"""

from __future__ import annotations

from typing import Any

from backend.app import App
from backend.feedback_export import jsonl, snapshot
from backend.principal import Principal
from backend.store_feedback import RATINGS
from backend.web import Request, not_found, optional_str
from common.errors import ApiError
from common.http import Response

MAX_COMMENT_CHARS = 2000
FORMATS = ("json", "jsonl")


def rater_of(who: Principal) -> str:
    """The person a rating belongs to: the user, or '' for the one person of single-user mode."""
    return who.user_id or ""


def public(row: dict[str, Any]) -> dict[str, Any]:
    return {k: row[k] for k in ("message_id", "rating", "comment", "created_at", "updated_at")}


def rate(app: App, req: Request) -> Response:
    mid = req.params["message_id"]
    message = app.store.get_message(mid)
    if message is None:
        raise not_found("message", mid)
    if message["sender"] != "assistant":
        raise ApiError(400, "not_an_answer", f"message {mid!r} is a question; only answers can be rated "
                       "(use the ai_message_id of the answer)")
    data = req.json()
    rating = data.get("rating")
    if rating not in RATINGS:
        raise ApiError(400, "invalid_field", f"'rating' must be \"up\" or \"down\", not {rating!r}")
    comment = optional_str(data, "comment", "", max_len=MAX_COMMENT_CHARS).strip()
    row, replaced = app.store.rate(mid, rater_of(req.principal), rating, comment, _turn(app, message))
    return Response.json({"feedback": public(row), "changed": replaced},
                         audit={"rating": rating, "session_id": message["session_id"], "changed": replaced})


def _turn(app: App, answer: dict[str, Any]) -> dict[str, Any]:
    """The rated turn: its question, the answer with its citations, what was searched and how."""
    question = app.store.get_turn(answer["turn_id"]).get("user")
    meta = answer["metadata"]
    indexes = meta.get("indexes")
    if not isinstance(indexes, list):  # a streamed turn saved before it carried them: the conversation's links
        indexes = app.store.session_index_ids(answer["session_id"])
    options = meta.get("options") or (question or {}).get("metadata", {}).get("options") or {}
    return snapshot(question["content"] if question else "", answer, indexes, options)


def export(app: App, req: Request) -> Response:
    """Every rating (an admin's export when accounts are on): JSON for people, JSONL for `eval.run_answers`."""
    fmt = req.query_value("format") or "json"
    if fmt not in FORMATS:
        raise ApiError(400, "invalid_field", f"'format' must be one of {', '.join(FORMATS)}")
    items = app.store.all_feedback()
    if fmt == "json":
        return Response.json({"feedback": [{**public(i), "rater": i["rater"], "session_id": i["session_id"],
                                            "turn": i["turn"]} for i in items], "total": len(items)})
    text, skipped = jsonl(items)
    return Response(200, text, content_type="application/x-ndjson; charset=utf-8",
                    headers={"Content-Disposition": 'attachment; filename="docent-feedback.jsonl"',
                             "X-Docent-Skipped": str(skipped)})
