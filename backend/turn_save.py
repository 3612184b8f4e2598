"""`POST /sessions/<id>/messages/save`: a finished turn stored once, from the RAG API or from localGPT's client.

Two callers send two bodies. The RAG API saves every turn that carried a `session_id`
(`turn_id, question, answer, steps, …`, Documentation/api-gateway.md#durable-turns). localGPT's
client also saves the turns it streamed, with its own body (`user_message, assistant_message,
source_documents, steps`) and no turn id, and reads `{session, user_message_id, ai_message_id}`
back. Both describe the same turn, so whichever arrives second is matched to the first by its
question and answer text among the session's last turns (in the same transaction as the insert,
so two saves arriving together still match) and only adds what the first lacked (the RAG API's
events, or localGPT's own step list): nothing is stored twice. A turn is matched once from each
side, so a question asked twice with the same answer stays two turns.
"""

from __future__ import annotations

import uuid
from typing import Any

from backend.app import App
from backend.handlers_chat import ANSWER_META, display_names, turn_id_of
from backend.legacy import is_step_list, split_steps
from backend.web import Request, not_found
from common.errors import ApiError
from common.http import Response
from common.options import MAX_MESSAGE_CHARS

_STATUSES = ("complete", "error", "cancelled")
#: How many recent turns a save without a turn id is matched against.
_MATCH_WITHIN = 20


def save_turn(app: App, req: Request) -> Response:
    """Idempotent by `turn_id` (RAG API) or by question and answer text (localGPT's client)."""
    sid = req.params["session_id"]
    data = req.json()
    if "question" not in data and ("user_message" in data or "assistant_message" in data):
        return _save_client_turn(app, sid, data)
    turn_id = turn_id_of(data, required=True)
    question = data.get("question")
    answer = data.get("answer") if data.get("answer") is not None else ""
    status = data.get("status", "complete")
    if not isinstance(question, str) or not question.strip() or len(question) > MAX_MESSAGE_CHARS:
        raise ApiError(400, "invalid_field", "'question' must be a non-empty string")
    if not isinstance(answer, str):
        raise ApiError(400, "invalid_field", "'answer' must be a string")
    if status not in _STATUSES:
        raise ApiError(400, "invalid_field", f"'status' must be one of {', '.join(_STATUSES)}")
    _check_kinds(data, (("citations", list), ("source_documents", list), ("steps", list),
                        ("token_usage", dict), ("timings_ms", dict)))
    error = data.get("error")
    if error is not None and not isinstance(error, dict):
        raise ApiError(400, "invalid_field", "'error' must be null or an object")
    session = _session(app, sid)
    meta = split_steps({k: v for k, v in display_names(data).items() if k in ANSWER_META and v is not None})
    meta.update(status=status, error=error, saved_by="rag_api")
    if isinstance(data.get("indexes"), list):  # what the turn searched and how (kept for ratings, exports)
        meta["indexes"] = [i for i in data["indexes"] if isinstance(i, str)]
    if isinstance(data.get("options"), dict):
        meta["options"] = data["options"]
    content = answer or _placeholder(status, error)
    if status != "complete":
        created, (user, bot) = app.store.save_turn(sid, turn_id, question, content, meta)
    else:  # localGPT's client may have stored this turn first: then the RAG API's record is added to it
        created, (user, bot) = app.store.save_turn_matching(
            sid, turn_id, question, content, meta, merge={**meta, "rag_turn_id": turn_id},
            match=lambda found: found.get("saved_by") == "localgpt_client" and "rag_turn_id" not in found,
            within=_MATCH_WITHIN)
    return _answer(app, session, user["turn_id"], user, bot, created=created)


def _save_client_turn(app: App, sid: str, data: dict[str, Any]) -> Response:
    question, answer = data.get("user_message"), data.get("assistant_message")
    if not isinstance(question, str) or not question.strip() or len(question) > MAX_MESSAGE_CHARS:
        raise ApiError(400, "invalid_field", "'user_message' must be a non-empty string")
    if not isinstance(answer, str):
        raise ApiError(400, "invalid_field", "'assistant_message' must be a string")
    _check_kinds(data, (("source_documents", list), ("steps", list)))
    session = _session(app, sid)
    steps = data.get("steps")
    client_meta: dict[str, Any] = {"steps": steps} if is_step_list(steps) else {}
    sources = display_names({"source_documents": data.get("source_documents") or []})["source_documents"]
    meta = {**client_meta, "source_documents": sources, "status": "complete", "error": None,
            "saved_by": "localgpt_client"}
    # the RAG API saved it already (the usual order): localGPT's own steps are added to that turn
    created, (user, bot) = app.store.save_turn_matching(sid, uuid.uuid4().hex, question, answer, meta,
                                                        merge={**client_meta, "client_saved": True},
                                                        match=_unclaimed_rag_turn, within=_MATCH_WITHIN)
    return _answer(app, session, user["turn_id"], user, bot, created=created)


def _unclaimed_rag_turn(found: dict[str, Any]) -> bool:
    """A turn the RAG API saved that no save of localGPT's client was matched to yet (a question asked
    twice with the same answer is two turns)."""
    return found.get("saved_by") == "rag_api" and not found.get("client_saved")


def _answer(app: App, session: dict[str, Any], turn_id: str, user: dict[str, Any], bot: dict[str, Any], *,
            created: bool) -> Response:
    """Docent's fields and localGPT's (`session`, `user_message_id`, `ai_message_id`) in one object."""
    return Response.json({"saved": created, "duplicate": not created, "turn_id": turn_id,
                          "session": app.store.get_session(session["id"]) or session,
                          "user_message_id": user["id"], "ai_message_id": bot["id"]}, 201 if created else 200)


def _session(app: App, sid: str) -> dict[str, Any]:
    session = app.store.get_session(sid)
    if session is None:
        raise not_found("session", sid)
    return session


def _check_kinds(data: dict[str, Any], kinds: tuple[tuple[str, type], ...]) -> None:
    for name, kind in kinds:
        if data.get(name) is not None and not isinstance(data[name], kind):
            raise ApiError(400, "invalid_field", f"'{name}' must be {'a list' if kind is list else 'an object'}")


def _placeholder(status: str, error: dict[str, Any] | None) -> str:
    if status == "cancelled":
        return "(cancelled before an answer was produced)"
    if status == "error":
        detail = (error or {}).get("message") or "the answer could not be produced"
        return f"(failed: {detail})"
    return ""
