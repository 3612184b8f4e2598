"""Chat: `POST /sessions/<id>/messages` (through the RAG API) and the internal turn save.

A turn is one question and its answer, identified by `turn_id`. The question
is stored before the RAG API is called, so it is in the history even if the
RAG API is down; the RAG API gets the conversation so far with the question
and decides, once, whether it searches or answers directly (its `route` and
`route_reason` are stored with the answer). The answer is stored from the
`/chat` response *or* from the RAG API's own save
(`POST /sessions/<id>/messages/save`), whichever comes first — the other is a
no-op, so a turn is never stored twice.
"""

from __future__ import annotations

import re
import uuid
from typing import Any

from backend.app import App
from backend.history import conversation
from backend.options import normalize_options
from backend.web import Request, not_found
from common.errors import ApiError
from common.http import Response

MAX_MESSAGE_CHARS = 20_000
_TURN_RE = re.compile(r"^[A-Za-z0-9_-]{1,128}$")
_STATUSES = ("complete", "error", "cancelled")
_STORED_NAME_RE = re.compile(r"^([0-9a-f]{64})_(.+)$")
#: Fields of the RAG API's answer kept in the assistant message's metadata.
_ANSWER_META = ("answer_source", "citations", "source_documents", "token_usage", "timings_ms", "route", "backend",
                "model", "validation", "confidence", "refusal_reason", "sub_queries", "warnings", "cached",
                "evidence_score", "standalone_query", "steps", "route_reason")


def _turn_id(data: dict[str, Any], *, required: bool) -> str:
    value = data.get("turn_id", data.get("turnId"))
    if value is None and not required:
        return uuid.uuid4().hex
    if not isinstance(value, str) or not _TURN_RE.match(value):
        raise ApiError(400, "invalid_field", "'turn_id' must be 1-128 characters of [A-Za-z0-9_-]")
    return value


def display_names(payload: dict[str, Any]) -> dict[str, Any]:
    """Citations and sources name the stored file (`<sha256>_<name>`); show the uploaded name instead."""
    out = dict(payload)
    for key in ("citations", "source_documents"):
        items = payload.get(key)
        if isinstance(items, list):
            out[key] = [_display_name(item) for item in items]
    return out


def _display_name(item: Any) -> Any:
    if not isinstance(item, dict) or not isinstance(item.get("document_name"), str):
        return item
    found = _STORED_NAME_RE.match(item["document_name"])
    if found is None or found.group(1) != item.get("document_id"):
        return item
    return {**item, "document_name": found.group(2)}


def post_message(app: App, req: Request) -> Response:
    sid = req.params["session_id"]
    if app.store.get_session(sid) is None:
        raise not_found("session", sid)
    data = req.json()
    message = data.get("message", data.get("query"))
    if not isinstance(message, str) or not message.strip():
        raise ApiError(400, "invalid_field", "'message' must be a non-empty string")
    if len(message) > MAX_MESSAGE_CHARS:
        raise ApiError(400, "invalid_field", f"'message' is longer than {MAX_MESSAGE_CHARS} characters")
    options = normalize_options(data)
    turn_id = _turn_id(data, required=False)
    index_ids = app.store.session_index_ids(sid)
    history = conversation(app.store, sid, exclude_turn=turn_id)
    user = app.store.add_user_message(sid, turn_id, message, {"options": options})
    done = app.store.get_turn(turn_id).get("assistant")
    if done is not None:  # a retried request for a turn that is already answered: answer it again, once
        return _reply(app, sid, turn_id, done["content"], done["metadata"], user, done,
                      {k: done["metadata"].get(k) for k in _ANSWER_META if k in done["metadata"]})
    payload: dict[str, Any] = {**options, "query": message, "session_id": sid, "turn_id": turn_id,
                               "indexes": index_ids, "conversation_history": history}
    result = display_names(app.rag.chat(payload, req.request_id))
    answer = result.get("answer")
    if not isinstance(answer, str):
        raise ApiError(502, "rag_api_error", "the RAG API's /chat response has no answer")
    meta = {k: result[k] for k in _ANSWER_META if k in result}
    meta.update(status="complete", gate=result.get("route_reason"), indexes=index_ids)
    app.metrics.chat_routed(_gate_route(meta))
    _, (user, bot) = app.store.save_turn(sid, turn_id, message, answer, meta)
    return _reply(app, sid, turn_id, answer, meta, user, bot, result)


def _gate_route(meta: dict[str, Any]) -> str:
    """`direct` when the RAG API answered without searching, else `rag` (a task searches too)."""
    return "direct" if meta.get("route") == "direct" else "rag"


def _reply(app: App, sid: str, turn_id: str, answer: str, meta: dict[str, Any], user: dict[str, Any],
           bot: dict[str, Any], result: dict[str, Any]) -> Response:
    route = _gate_route(meta)
    return Response.json({
        "response": answer, "session": app.store.get_session(sid), "turn_id": turn_id,
        "source_documents": meta.get("source_documents", []), "citations": meta.get("citations", []),
        "answer_source": meta.get("answer_source"), "used_rag": route == "rag",
        "route": meta.get("route", route), "gate": {"route": route, "reason": meta.get("gate")},
        "user_message_id": user["id"], "ai_message_id": bot["id"], "message": bot, "result": result})


def save_turn(app: App, req: Request) -> Response:
    """Internal: the RAG API stores a finished (or failed, or cancelled) turn. Idempotent by `turn_id`."""
    sid = req.params["session_id"]
    data = req.json()
    turn_id = _turn_id(data, required=True)
    question = data.get("question")
    answer = data.get("answer") if data.get("answer") is not None else ""
    status = data.get("status", "complete")
    if not isinstance(question, str) or not question.strip() or len(question) > MAX_MESSAGE_CHARS:
        raise ApiError(400, "invalid_field", "'question' must be a non-empty string")
    if not isinstance(answer, str):
        raise ApiError(400, "invalid_field", "'answer' must be a string")
    if status not in _STATUSES:
        raise ApiError(400, "invalid_field", f"'status' must be one of {', '.join(_STATUSES)}")
    for name, kind in (("citations", list), ("source_documents", list), ("steps", list),
                       ("token_usage", dict), ("timings_ms", dict)):
        if data.get(name) is not None and not isinstance(data[name], kind):
            raise ApiError(400, "invalid_field", f"'{name}' must be {'a list' if kind is list else 'an object'}")
    error = data.get("error")
    if error is not None and not isinstance(error, dict):
        raise ApiError(400, "invalid_field", "'error' must be null or an object")
    if app.store.get_session(sid) is None:
        raise not_found("session", sid)
    meta = {k: v for k, v in display_names(data).items() if k in _ANSWER_META and v is not None}
    meta.update(status=status, error=error, saved_by="rag_api")
    content = answer or _placeholder(status, error)
    created, (user, bot) = app.store.save_turn(sid, turn_id, question, content, meta)
    return Response.json({"saved": created, "duplicate": not created, "turn_id": turn_id,
                          "user_message_id": user["id"], "ai_message_id": bot["id"]}, 201 if created else 200)


def _placeholder(status: str, error: dict[str, Any] | None) -> str:
    if status == "cancelled":
        return "(cancelled before an answer was produced)"
    if status == "error":
        detail = (error or {}).get("message") or "the answer could not be produced"
        return f"(failed: {detail})"
    return ""
