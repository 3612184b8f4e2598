"""Authorization: one rule per route of the gateway, checked before its handler runs.

`POLICY` maps every (method, pattern) of `backend.routes.ALL_ROUTES` to the checks it needs; a
route without an entry is refused to everyone but an admin (and a unit test fails), so a new route
is never open by accident. A check reads the route's path parameters: a session must be the
caller's own, an index must be owned or shared with enough access, a document must belong to one of
those. A check that resolves a parameter (a document's id, from its name or hash) returns the
resolved value, and the handler reads the parameters `authorize` returns: the caller's are never
rewritten. Something that does not exist is left to the handler's 404. Single-user mode and the RAG
API's service calls pass every check (`Principal.unrestricted`).

Roles cap what a share gives: a viewer reads and asks (even with a `write` share); an editor also
creates indexes, uploads and builds; an admin manages users and sees everything.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from backend.principal import Principal
from backend.store import Store
from common.errors import ApiError

RANK = {"read": 1, "write": 2, "owner": 3}
#: A route's check: raises the 403, or returns the parameters it resolved (None: nothing to resolve).
Check = Callable[[Store, Principal, Mapping[str, str]], Mapping[str, str] | None]


def forbidden(code: str, message: str) -> ApiError:
    return ApiError(403, code, message)


def index_level(store: Store, who: Principal, index_id: str) -> str | None:
    """`owner` / `write` / `read` / None: what `who` may do with an index (capped by role)."""
    if who.is_admin:
        return "owner"
    if who.user_id is None:
        return None
    exists, owner = store.owner_of("indexes", index_id)
    if not exists:
        return None
    level = "owner" if owner == who.user_id else store.share_access(index_id, who.user_id)
    if level is not None and who.role == "viewer":
        return "read"
    return level


def can_read_index(store: Store, who: Principal, index_id: str) -> bool:
    return index_level(store, who, index_id) is not None


def require_index(store: Store, who: Principal, index_id: str, need: str) -> None:
    exists, _ = store.owner_of("indexes", index_id)
    if not exists:
        return  # the handler answers 404
    level = index_level(store, who, index_id)
    if level is None:
        raise forbidden("index_forbidden", f"index {index_id!r} is not yours and not shared with you")
    if RANK[level] < RANK[need]:
        raise forbidden("index_read_only" if need == "write" else "index_owner_only",
                        f"you may only read index {index_id!r}" if level == "read" and need == "write"
                        else f"only the owner of index {index_id!r} or an admin may do this")


def owns_session(store: Store, who: Principal, session_id: str) -> bool:
    if who.is_admin:
        return True
    exists, owner = store.owner_of("sessions", session_id)
    return exists and owner is not None and owner == who.user_id


def _session(store: Store, who: Principal, params: Mapping[str, str]) -> None:
    sid = params["session_id"]
    exists, _ = store.owner_of("sessions", sid)
    if exists and not owns_session(store, who, sid):
        raise forbidden("session_forbidden", f"session {sid!r} belongs to someone else")


def _index(need: str) -> Check:
    def check(store: Store, who: Principal, params: Mapping[str, str]) -> None:
        require_index(store, who, params["index_id"], need)
    return check


def _role(role: str) -> Check:
    def check(store: Store, who: Principal, params: Mapping[str, str]) -> None:
        if not who.at_least(role):
            raise forbidden("role_forbidden", f"this needs the {role} role; you are a {who.role or 'guest'}")
    return check


def _document(store: Store, who: Principal, params: Mapping[str, str]) -> Mapping[str, str] | None:
    """A document is readable through its index or its session; the readable copy is the one served."""
    if who.unrestricted:
        return None
    found = store.documents_matching(params["document_id"])
    for doc in found:
        if (doc["index_id"] and can_read_index(store, who, doc["index_id"])) or \
                (doc["index_id"] is None and doc["session_id"] and owns_session(store, who, doc["session_id"])) or \
                who.is_admin:
            return {"document_id": doc["id"]}
    if found:
        raise forbidden("document_forbidden", "this document belongs to an index that is not shared with you")
    return None


def _message(store: Store, who: Principal, params: Mapping[str, str]) -> None:
    """A message is readable by whoever may read its conversation."""
    found = store.get_message(params["message_id"])
    if found is not None and not owns_session(store, who, found["session_id"]):
        raise forbidden("message_forbidden", "this message belongs to someone else's conversation")


def _nobody(store: Store, who: Principal, params: Mapping[str, str]) -> None:
    """Anyone signed in: the handler itself narrows what is listed to the caller's own."""


_admin = _role("admin")
_editor = _role("editor")


@dataclass(frozen=True)
class Rule:
    checks: tuple[Check, ...]
    #: Audit action recorded when the route answers < 400 (backend/server.py), with the parameter naming its target.
    audit: str = ""
    target: str = ""
    #: Rate-limit bucket (`chat`, `upload`) counted before the handler runs.
    limit: str = ""


def rule(*checks: Check, audit: str = "", target: str = "", limit: str = "") -> Rule:
    return Rule(checks or (_nobody,), audit, target, limit)


POLICY: dict[tuple[str, str], Rule] = {
    ("GET", "/health"): rule(),
    ("GET", "/models"): rule(),
    ("GET", "/metrics"): rule(_admin),
    ("POST", "/chat"): rule(audit="chat", limit="chat"),
    ("POST", "/chat/stream"): rule(audit="chat", limit="chat"),
    ("GET", "/sessions"): rule(),
    ("POST", "/sessions"): rule(),
    ("GET", "/sessions/cleanup"): rule(),
    ("GET", "/sessions/{session_id}"): rule(_session),
    ("GET", "/sessions/{session_id}/history"): rule(_session),
    ("GET", "/sessions/{session_id}/export"): rule(_session),
    ("DELETE", "/sessions/{session_id}"): rule(_session, audit="delete", target="session_id"),
    ("POST", "/sessions/{session_id}/rename"): rule(_session),
    ("POST", "/sessions/{session_id}/messages"): rule(_session, audit="chat", target="session_id", limit="chat"),
    ("POST", "/sessions/{session_id}/messages/save"): rule(_session),
    ("GET", "/sessions/{session_id}/documents"): rule(_session),
    ("POST", "/sessions/{session_id}/upload"): rule(_session, _editor, audit="upload", target="session_id",
                                                    limit="upload"),
    ("POST", "/sessions/{session_id}/index"): rule(_session, _editor, audit="build", target="session_id"),
    ("GET", "/sessions/{session_id}/indexes"): rule(_session),
    ("POST", "/sessions/{session_id}/indexes/{index_id}"): rule(_session, _index("read")),
    ("DELETE", "/sessions/{session_id}/indexes/{index_id}"): rule(_session),
    ("GET", "/indexes"): rule(),
    ("POST", "/indexes"): rule(_editor),
    ("GET", "/indexes/{index_id}"): rule(_index("read")),
    ("DELETE", "/indexes/{index_id}"): rule(_index("owner"), audit="delete", target="index_id"),
    ("POST", "/indexes/{index_id}/upload"): rule(_editor, _index("write"), audit="upload", target="index_id",
                                                 limit="upload"),
    ("DELETE", "/indexes/{index_id}/documents/{document_id}"): rule(_editor, _index("write"), audit="delete_document",
                                                                    target="index_id"),
    ("POST", "/indexes/{index_id}/build"): rule(_editor, _index("write"), audit="build", target="index_id"),
    ("GET", "/indexes/{index_id}/jobs/{job_id}"): rule(_index("read")),
    ("GET", "/indexes/{index_id}/sync"): rule(_index("read")),
    ("POST", "/indexes/{index_id}/sync"): rule(_editor, _index("write"), audit="build", target="index_id"),
    ("POST", "/indexes/{index_id}/sync/folders"): rule(_admin),  # a folder on the server's disk
    ("DELETE", "/indexes/{index_id}/sync/folders"): rule(_admin),
    ("GET", "/indexes/{index_id}/shares"): rule(_index("read")),
    ("POST", "/indexes/{index_id}/shares"): rule(_index("owner"), audit="share", target="index_id"),
    ("DELETE", "/indexes/{index_id}/shares/{grantee}"): rule(_index("owner"), audit="unshare", target="index_id"),
    ("POST", "/messages/{message_id}/feedback"): rule(_message, audit="feedback", target="message_id"),
    ("GET", "/feedback"): rule(_admin),
    ("GET", "/documents/{document_id}/pages/{page}.png"): rule(_document),
    ("GET", "/documents/{document_id}/file"): rule(_document),
    ("POST", "/verify"): rule(audit="verify", limit="chat"),  # the handler checks the indexes the body names
    ("GET", "/v1/models"): rule(),
    ("POST", "/v1/chat/completions"): rule(audit="chat", limit="chat"),
    # accounts (backend/handlers_auth.py, backend/handlers_admin.py)
    ("GET", "/auth/status"): rule(),
    ("POST", "/auth/login"): rule(),
    ("POST", "/auth/logout"): rule(),
    ("GET", "/auth/me"): rule(),
    ("POST", "/auth/rag-token"): rule(),
    ("GET", "/auth/epoch"): rule(),  # the handler answers the service token only
    ("GET", "/auth/tokens"): rule(),
    ("POST", "/auth/tokens"): rule(),
    ("DELETE", "/auth/tokens/{token_id}"): rule(),
    ("GET", "/admin/users"): rule(_admin),
    ("POST", "/admin/users"): rule(_admin),
    ("POST", "/admin/users/{user_id}"): rule(_admin),
    ("GET", "/admin/tokens"): rule(_admin),
    ("GET", "/admin/audit"): rule(_admin),
}

_DEFAULT = rule(_admin)


def rule_for(method: str, pattern: str) -> Rule:
    return POLICY.get(("GET" if method == "HEAD" else method, pattern), _DEFAULT)


@dataclass(frozen=True)
class Authorized:
    """What `authorize` decided: the route's rule (audit, limits) and its parameters, as the checks resolved them."""

    rule: Rule
    params: Mapping[str, str] = field(default_factory=dict)


def authorize(store: Store, who: Principal, method: str, pattern: str, params: Mapping[str, str]) -> Authorized:
    """Run the route's checks (403 on the first that fails); the parameters come back with what they resolved."""
    found = rule_for(method, pattern)
    resolved = dict(params)
    if not who.unrestricted:
        for check in found.checks:
            resolved.update(check(store, who, params) or {})
    return Authorized(found, resolved)
