"""`/admin/*` (admin only, backend/access.py): users, everyone's API tokens, the audit log."""

from __future__ import annotations

from backend.app import App
from backend.handlers_auth import client_address
from backend.passwords import MAX_LENGTH, PasswordPolicyError, hash_password
from backend.store_accounts import ROLES, public_user
from backend.web import Request, not_found, require_str
from common.errors import ApiError
from common.http import Response

AUDIT_PAGE_MAX = 500


def _role(value: object) -> str:
    if value not in ROLES:
        raise ApiError(400, "invalid_role", f"'role' must be one of {', '.join(ROLES)}")
    return str(value)


def _hash(password: str) -> str:
    try:
        return hash_password(password)
    except PasswordPolicyError as exc:
        raise ApiError(400, "weak_password", str(exc)) from exc


def list_users(app: App, req: Request) -> Response:
    return Response.json({"users": app.store.list_users()})


def create_user(app: App, req: Request) -> Response:
    data = req.json()
    username = require_str(data, "username", max_len=64).strip()
    if not username.replace("_", "").replace("-", "").replace(".", "").isalnum():
        raise ApiError(400, "invalid_username", "a user name is letters, digits, '.', '_' and '-'")
    role = _role(data.get("role", "viewer"))
    user = app.store.create_user(username, role, _hash(require_str(data, "password", max_len=MAX_LENGTH)))
    app.store.audit(req.principal.label, "user_created", target=user["id"], address=client_address(req),
                    detail={"username": username, "role": role})
    return Response.json({"user": public_user(user)}, 201)


def update_user(app: App, req: Request) -> Response:
    """Change a role, disable or enable, set a new password; the last active admin cannot be demoted."""
    uid = req.params["user_id"]
    user = app.store.get_user(uid)
    if user is None:
        raise not_found("user", uid)
    data = req.json()
    role = _role(data["role"]) if "role" in data else None
    disabled = data.get("disabled")
    if disabled is not None and not isinstance(disabled, bool):
        raise ApiError(400, "invalid_field", "'disabled' must be true or false")
    password = data.get("password")
    if password is not None and not isinstance(password, str):
        raise ApiError(400, "invalid_field", "'password' must be a string")
    demoting = user["role"] == "admin" and not user["disabled"] and (role not in (None, "admin") or disabled)
    if demoting and app.store.count_admins() <= 1:
        raise ApiError(409, "last_admin", "this is the last active admin: make another admin first")
    changed = app.store.update_user(uid, role=role, disabled=disabled,
                                    password_hash=_hash(password) if password is not None else None)
    app.store.audit(req.principal.label, "user_changed", target=uid, address=client_address(req),
                    detail={"role": role, "disabled": disabled, "password_changed": password is not None})
    return Response.json({"user": public_user(changed or user)})


def list_all_tokens(app: App, req: Request) -> Response:
    return Response.json({"tokens": app.store.list_tokens(None)})


def audit_page(app: App, req: Request) -> Response:
    """Newest first: `?limit=` (default 100) and `?before=<seq>` for the next page."""
    raw_limit, raw_before = req.query_value("limit") or "100", req.query_value("before")
    if not raw_limit.isdigit() or not 1 <= int(raw_limit) <= AUDIT_PAGE_MAX:
        raise ApiError(400, "invalid_field", f"'limit' must be an integer from 1 to {AUDIT_PAGE_MAX}")
    if raw_before is not None and not raw_before.isdigit():
        raise ApiError(400, "invalid_field", "'before' must be a row number (seq)")
    rows = app.store.audit_page(int(raw_before) if raw_before else None, int(raw_limit))
    nxt = rows[-1]["seq"] if len(rows) == int(raw_limit) and rows[-1]["seq"] > 1 else None
    return Response.json({"entries": rows, "next_before": nxt})
