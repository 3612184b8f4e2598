"""Session routes: CRUD, rename, documents, uploads, session indexing and index links."""

from __future__ import annotations

import re
from typing import Any

from backend.access import can_read_index
from backend.app import App
from backend.handlers_feedback import public as public_feedback, rater_of
from backend.history import DEFAULT_MESSAGES, MAX_MESSAGES, conversation
from backend.builds import refresh_if_building
from backend.legacy import present, present_index
from backend.library import remove_files, start_build, store_uploads
from backend.session_export import session_markdown
from backend.store import DEFAULT_TITLE
from backend.store_library import now
from backend.web import Request, not_found, optional_str, public_base, require_str
from common.errors import ApiError
from common.http import Response
from common.options import MAX_MODEL_CHARS


def _session(app: App, session_id: str) -> dict[str, Any]:
    session = app.store.get_session(session_id)
    if session is None:
        raise not_found("session", session_id)
    return session


def _visible(app: App, req: Request) -> list[dict[str, Any]]:
    """Everyone's sessions in single-user mode (and for the service); else the caller's own."""
    sessions = app.store.list_sessions()
    who = req.principal
    if who.unrestricted:
        return sessions
    own = app.store.session_ids_of(who.user_id or "")
    return [s for s in sessions if s["id"] in own]


def list_sessions(app: App, req: Request) -> Response:
    sessions = _visible(app, req)
    return Response.json({"sessions": sessions, "total": len(sessions)})


def create_session(app: App, req: Request) -> Response:
    data = req.json(required=False)
    title = optional_str(data, "title", DEFAULT_TITLE, max_len=200).strip() or DEFAULT_TITLE
    model = optional_str(data, "model", "", max_len=MAX_MODEL_CHARS)
    session = app.store.create_session(title, model)
    if req.principal.user_id:
        app.store.set_owner("sessions", session["id"], req.principal.user_id)
    return Response.json({"session": session, "session_id": session["id"]}, 201)


def get_session(app: App, req: Request) -> Response:
    session = _session(app, req.params["session_id"])
    ratings = app.store.ratings_for_session(session["id"], rater_of(req.principal))
    messages = [_with_rating(present(m), ratings) for m in app.store.get_messages(session["id"])]
    return Response.json({"session": session, "messages": messages})


def _with_rating(message: dict[str, Any], ratings: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """An answer carries the caller's own rating (`feedback`), so the web app shows it after a reload."""
    found = ratings.get(message["id"])
    return {**message, "feedback": public_feedback(found)} if found else message


def export_session(app: App, req: Request) -> Response:
    """The conversation as Markdown (`format=md`, the only format): answers, citations, page links."""
    session = _session(app, req.params["session_id"])
    fmt = req.query_value("format") or "md"
    if fmt not in ("md", "markdown"):
        raise ApiError(400, "invalid_field", "'format' must be md (Markdown)")
    text = session_markdown(session, app.store.get_messages(session["id"]), public_base(req), now())
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", session["title"]).strip("-")[:60] or "conversation"
    return Response(200, text, content_type="text/markdown; charset=utf-8",
                    headers={"Content-Disposition": f'attachment; filename="{name}.md"'})


def session_history(app: App, req: Request) -> Response:
    """The last messages (`limit`, default 6) without `exclude_turn`: what the RAG API resolves a follow-up with."""
    session = _session(app, req.params["session_id"])
    raw = req.query_value("limit")
    if raw is not None and not (raw.isdigit() and 1 <= int(raw) <= MAX_MESSAGES):
        raise ApiError(400, "invalid_field", f"'limit' must be an integer from 1 to {MAX_MESSAGES}")
    limit = int(raw) if raw is not None else DEFAULT_MESSAGES
    history = conversation(app.store, session["id"], limit, req.query_value("exclude_turn"))
    return Response.json({"session_id": session["id"], "history": history, "model_used": session["model_used"]})


def delete_session(app: App, req: Request) -> Response:
    sid = req.params["session_id"]
    paths = app.store.delete_session(sid)
    if paths is None:
        raise not_found("session", sid)
    removed = remove_files(app, paths)
    return Response.json({"deleted": True, "session_id": sid, "files_removed": removed})


def cleanup_sessions(app: App, req: Request) -> Response:
    """localGPT's `GET /sessions/cleanup`: delete the sessions that have no messages (and their pending uploads)."""
    deleted: list[str] = []
    removed = 0
    for session in _visible(app, req):
        if session["message_count"] == 0:
            paths = app.store.delete_session(session["id"])
            if paths is not None:
                deleted.append(session["id"])
                removed += remove_files(app, paths)
    return Response.json({"message": f"Cleaned up {len(deleted)} empty sessions", "cleanup_count": len(deleted),
                          "deleted": deleted, "files_removed": removed})


def rename_session(app: App, req: Request) -> Response:
    sid = req.params["session_id"]
    _session(app, sid)
    title = require_str(req.json(), "title", max_len=200).strip()
    session = app.store.rename_session(sid, title)
    if session is None:
        raise not_found("session", sid)
    return Response.json({"message": "Session renamed successfully", "session": session})


def session_documents(app: App, req: Request) -> Response:
    session = _session(app, req.params["session_id"])
    docs = app.store.session_documents(session["id"])
    return Response.json({"session": session, "files": [d["filename"] for d in docs],
                          "file_count": len(docs), "documents": docs})


def upload(app: App, req: Request) -> Response:
    session = _session(app, req.params["session_id"])
    saved = store_uploads(app, req, session_id=session["id"])
    return Response.json({"message": f"Successfully uploaded {len(saved)} files.", "uploaded_files": saved})


def index_documents(app: App, req: Request) -> Response:
    """Turn the session's pending uploads into an index of its own, build it and link it."""
    session = _session(app, req.params["session_id"])
    pending = [d for d in app.store.session_documents(session["id"]) if d["index_id"] is None]
    if not pending:
        return Response.json({"message": "No documents to index for this session.", "index_id": None})
    index = app.store.create_index(f"{session['title']} documents", "Created from documents attached in chat",
                                   {"status": "created", "source": "session_upload"}, session_id=session["id"])
    if req.principal.user_id:
        app.store.set_owner("indexes", index["id"], req.principal.user_id)
    app.store.assign_pending_documents(session["id"], index["id"])
    app.store.link(session["id"], index["id"])
    build = start_build(app, index["id"], {}, req.request_id)
    return Response.json({"message": f"Indexing {len(pending)} attached document(s)", "index_id": index["id"],
                          "index": app.store.get_index(index["id"]), "job_id": build.get("job_id"),
                          "build": build}, 202)


def session_indexes(app: App, req: Request) -> Response:
    session = _session(app, req.params["session_id"])
    # a linked index whose share was revoked is no longer shown (asking with it is refused: handlers_chat.py)
    ids = [iid for iid in app.store.session_index_ids(session["id"])
           if req.principal.unrestricted or can_read_index(app.store, req.principal, iid)]
    found = [present_index(refresh_if_building(app, i, req.request_id))
             for i in (app.store.get_index(iid) for iid in ids) if i]
    return Response.json({"indexes": found, "total": len(found)})


def _session_and_index(app: App, req: Request) -> tuple[str, str]:
    """Both ids of a link route, each answered with its own 404 when unknown."""
    sid, iid = req.params["session_id"], req.params["index_id"]
    _session(app, sid)
    if app.store.get_index(iid) is None:
        raise not_found("index", iid)
    return sid, iid


def link_index(app: App, req: Request) -> Response:
    sid, iid = _session_and_index(app, req)
    created = app.store.link(sid, iid)
    return Response.json({"message": "Index linked to session" if created else "Index already linked",
                          "session_id": sid, "index_id": iid, "linked": True})


def unlink_index(app: App, req: Request) -> Response:
    """Stop searching an index from this session; the index itself stays. Idempotent."""
    sid, iid = _session_and_index(app, req)
    removed = app.store.unlink(sid, iid)
    return Response.json({"message": "Index unlinked from session" if removed else "Index was not linked",
                          "session_id": sid, "index_id": iid, "linked": False, "unlinked": removed})
