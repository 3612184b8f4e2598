"""Chat: `POST /sessions/<id>/messages` (through the RAG API); the turn save is `backend/turn_save.py`.

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

from backend.access import require_index
from backend.app import App
from backend.history import conversation
from backend.legacy import present, split_steps
from backend.options import normalize_options
from backend.web import Request, not_found
from common.document_ids import file_id
from common.errors import ApiError
from common.http import Response
from common.options import MAX_QUERY_CHARS, TURN_ID_PATTERN

_STORED_NAME_RE = re.compile(r"^([0-9a-f]{64})_(.+)$")
#: Fields of the RAG API's answer kept in the assistant message's metadata.
ANSWER_META = ("answer_source", "citations", "source_documents", "token_usage", "timings_ms", "route", "backend",
                "model", "validation", "confidence", "refusal_reason", "sub_queries", "warnings", "cached",
                "evidence_score", "standalone_query", "steps", "events", "route_reason")


def turn_id_of(data: dict[str, Any], *, required: bool) -> str:
    value = data.get("turn_id", data.get("turnId"))
    if value is None and not required:
        return uuid.uuid4().hex
    if not isinstance(value, str) or not TURN_ID_PATTERN.match(value):  # what the RAG API takes too
        raise ApiError(400, "invalid_field", "'turn_id' must be 1-128 characters of [A-Za-z0-9_-], the first a "
                       "letter or digit")
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
    if found is None or found.group(1) != file_id(str(item.get("document_id") or "")):
        return item
    return {**item, "document_name": found.group(2)}


def message_of(data: dict[str, Any]) -> str:
    """The question of a chat body (`message`, or `query` as the RAG API names it), checked."""
    message = data.get("message", data.get("query"))
    if not isinstance(message, str) or not message.strip():
        raise ApiError(400, "invalid_field", "'message' must be a non-empty string")
    if len(message) > MAX_QUERY_CHARS:  # the RAG API's limit: a longer question would be stored, then refused
        raise ApiError(400, "invalid_field", f"'message' is longer than {MAX_QUERY_CHARS} characters")
    return message


def post_message(app: App, req: Request) -> Response:
    sid = req.params["session_id"]
    session = app.store.get_session(sid)
    if session is None:
        raise not_found("session", sid)
    data = req.json()
    message = message_of(data)
    options = normalize_options(data)
    if session.get("model_used") and not options.get("model") and not options.get("backend"):
        options["model"] = session["model_used"]  # the conversation's model answers it (the RAG API checks it)
    turn_id = turn_id_of(data, required=False)
    index_ids = app.store.session_index_ids(sid)
    for iid in index_ids:  # a share revoked after the index was linked is refused here, before retrieval
        require_index(app.store, req.principal, iid, "read")
    history = conversation(app.store, sid, exclude_turn=turn_id)
    user = app.store.add_user_message(sid, turn_id, message, {"options": options})
    done = app.store.get_turn(turn_id).get("assistant")
    if done is not None:  # a retried request for a turn that is already answered: answer it again, once
        return _reply(app, sid, turn_id, done["content"], done["metadata"], user, done,
                      {k: done["metadata"].get(k) for k in ANSWER_META if k in done["metadata"]}, index_ids)
    payload: dict[str, Any] = {**options, "query": message, "session_id": sid, "turn_id": turn_id,
                               "indexes": index_ids, "conversation_history": history}
    result = display_names(app.rag.chat(payload, req.request_id))
    answer = result.get("answer")
    if not isinstance(answer, str):
        raise ApiError(502, "rag_api_error", "the RAG API's /chat response has no answer")
    meta = split_steps({k: result[k] for k in ANSWER_META if k in result})
    meta.update(status="complete", gate=result.get("route_reason"), indexes=index_ids)
    app.metrics.chat_routed(_gate_route(meta))
    _, (user, bot) = app.store.save_turn(sid, turn_id, message, answer, meta)
    return _reply(app, sid, turn_id, answer, meta, user, bot, result, index_ids)


def _gate_route(meta: dict[str, Any]) -> str:
    """`direct` when the RAG API answered without searching, else `rag` (a task searches too)."""
    return "direct" if meta.get("route") == "direct" else "rag"


def _reply(app: App, sid: str, turn_id: str, answer: str, meta: dict[str, Any], user: dict[str, Any],
           bot: dict[str, Any], result: dict[str, Any], index_ids: list[str]) -> Response:
    """The turn's answer; the audit row names the indexes it searched."""
    route = _gate_route(meta)
    return Response.json({
        "response": answer, "session": app.store.get_session(sid), "turn_id": turn_id,
        "source_documents": meta.get("source_documents", []), "citations": meta.get("citations", []),
        "answer_source": meta.get("answer_source"), "used_rag": route == "rag",
        "route": meta.get("route", route), "gate": {"route": route, "reason": meta.get("gate")},
        "user_message_id": user["id"], "ai_message_id": bot["id"], "message": present(bot), "result": result},
        audit={"indexes": index_ids})
