"""`/auth/*`: status, login and logout, the signed-in user, personal API tokens, RAG API grants.

The RAG API grant (`POST /auth/rag-token`) is what the browser streams an answer with: it names
the user, the session and exactly the indexes this question searches, each checked here, and it
lives `DOCENT_RAG_GRANT_TTL_S` seconds. The web app asks for one per question, so a share revoked
a moment ago is refused on the next question; that request is also where a chat is rate-limited and
audited, since the answer itself never passes through the gateway.
"""

from __future__ import annotations

from typing import Any

from backend.access import can_read_index, owns_session
from backend.app import App
from backend.passwords import MAX_LENGTH
from backend.principal import Principal
from backend.store_accounts import public_user
from backend.web import Request, optional_str, require_str
from common import grants
from common.errors import ApiError
from common.http import Response

MAX_GRANT_INDEXES = 64


def client_address(req: Request) -> str:
    return req.client or ""


def _user(req: Request) -> Principal:
    who = req.principal
    if who.kind != "user":
        raise ApiError(409, "accounts_off" if who.kind == "single" else "not_a_user",
                       "accounts are off: this gateway runs in single-user mode" if who.kind == "single"
                       else "this needs a signed-in user, not a service token")
    return who


def status(app: App, req: Request) -> Response:
    """Public: whether the web app should show its login page, and who is signed in (if anyone)."""
    who = req.principal
    return Response.json({"accounts": app.auth.enabled(), "user": who.public() if who.kind == "user" else None})


def login(app: App, req: Request) -> Response:
    if not app.auth.enabled():
        raise ApiError(409, "accounts_off", "accounts are off: create the first user with "
                       "`python -m backend create-user NAME --role admin --password-stdin`")
    data = req.json()
    username = require_str(data, "username", max_len=200).strip()
    password = require_str(data, "password", max_len=MAX_LENGTH, allow_empty=True)
    user, secret, csrf = app.auth.login(username, password, client_address(req))
    max_age = int(app.config.session_hours * 3600)
    return Response(200, {"user": public_user(user), "csrf_token": csrf},
                    headers={"Set-Cookie": app.auth.cookie_header(secret, max_age)})


def logout(app: App, req: Request) -> Response:
    secret = app.auth.cookie_of(req.headers)
    if secret:
        app.store.close_login(secret)
    if req.principal.kind == "user":
        app.store.audit(req.principal.label, "logout", address=client_address(req))
    return Response(200, {"signed_out": True}, headers={"Set-Cookie": app.auth.cookie_header("", 0)})


def me(app: App, req: Request) -> Response:
    who = req.principal
    if who.kind == "single":
        return Response.json({"user": None, "accounts": False})
    if who.kind != "user":
        return Response.json({"user": None, "accounts": True, "service": True})
    user = app.store.get_user(who.user_id or "")
    body: dict[str, Any] = {"user": public_user(user) if user else who.public(), "accounts": True, "via": who.via}
    if who.via == "cookie":
        body["csrf_token"] = who.csrf
    return Response.json(body)


def list_tokens(app: App, req: Request) -> Response:
    who = _user(req)
    return Response.json({"tokens": app.store.list_tokens(who.user_id)})


def create_token(app: App, req: Request) -> Response:
    """A personal API token, shown once: only its hash is kept."""
    who = _user(req)
    name = optional_str(req.json(required=False), "name", "API token", max_len=100).strip() or "API token"
    secret = app.auth.new_api_token()
    row = app.store.add_token(who.user_id or "", name, secret)
    app.store.audit(who.label, "token_created", target=row["id"], address=client_address(req), detail={"name": name})
    return Response.json({**row, "token": secret, "note": "shown once: store it now"}, 201)


def revoke_token(app: App, req: Request) -> Response:
    who = _user(req) if not req.principal.is_admin else req.principal
    token_id = req.params["token_id"]
    if not app.store.revoke_token(token_id, None if who.is_admin else who.user_id):
        raise ApiError(404, "token_not_found", f"no token {token_id!r} of yours")
    app.store.audit(who.label, "token_revoked", target=token_id, address=client_address(req))
    return Response.json({"revoked": True, "id": token_id})


def rag_token(app: App, req: Request) -> Response:
    """A short-lived grant for the RAG API naming the user, the session and the indexes to search."""
    if not app.auth.enabled():
        return Response.json({"token": "", "accounts": False})
    who = _user(req)
    data = req.json(required=False)
    session_id = optional_str(data, "session_id", "", max_len=200) or None
    if session_id is not None:
        exists, _ = app.store.owner_of("sessions", session_id)
        if not exists:
            raise ApiError(404, "session_not_found", f"session {session_id!r} not found")
        if not owns_session(app.store, who, session_id):
            raise ApiError(403, "session_forbidden", f"session {session_id!r} belongs to someone else")
    raw = data.get("indexes")
    if raw is None:
        indexes = app.store.session_index_ids(session_id) if session_id else []
    elif isinstance(raw, list) and all(isinstance(i, str) for i in raw) and len(raw) <= MAX_GRANT_INDEXES:
        indexes = list(dict.fromkeys(raw))
    else:
        raise ApiError(400, "invalid_field", f"'indexes' must be a list of at most {MAX_GRANT_INDEXES} index ids")
    refused = [i for i in indexes if not can_read_index(app.store, who, i)]
    if refused:
        raise ApiError(403, "index_forbidden", f"not yours and not shared with you: {', '.join(refused)}",
                       indexes=refused)
    purpose = data.get("purpose", "chat")
    if purpose not in ("chat", "progress"):
        raise ApiError(400, "invalid_field", "'purpose' must be 'chat' or 'progress'")
    if purpose == "chat":
        app.auth.limiter.hit("chat", who.user_id or "")
        app.store.audit(who.label, "chat", target=session_id or "", address=client_address(req),
                        detail={"indexes": indexes, "via": "rag_api"})
    ttl = app.config.rag_grant_ttl_s
    claims = {"sub": who.user_id, "name": who.username, "role": who.role, "read": indexes, "session": session_id,
              "ep": app.store.grant_epoch(who.user_id or "")}
    token = grants.sign(claims, app.auth.secret(), ttl)
    return Response.json({"token": token, "expires_in": ttl, "indexes": indexes, "session_id": session_id})


def grant_epoch(app: App, req: Request) -> Response:
    """Service only: the user's revocation epoch, which the RAG API compares with a grant's `ep`."""
    if req.principal.kind != "service":
        raise ApiError(403, "service_only", "this is for the RAG API (the service token) only")
    user_id = (req.query_value("user") or "").strip()
    if not user_id or len(user_id) > 200:
        raise ApiError(400, "invalid_field", "'user' (a user id) is required")
    return Response.json({"user": user_id, "epoch": app.store.grant_epoch(user_id)})
