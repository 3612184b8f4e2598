"""`/indexes/<id>/shares`: who else may read or write an index (the owner or an admin changes it)."""

from __future__ import annotations

from backend.app import App
from backend.library import index_or_404
from backend.store_sharing import ACCESS, EVERYONE
from backend.web import Request, require_str
from common.errors import ApiError
from common.http import Response


def list_shares(app: App, req: Request) -> Response:
    index = index_or_404(app, req.params["index_id"])
    _, owner = app.store.owner_of("indexes", index["id"])
    user = app.store.get_user(owner) if owner else None
    return Response.json({"index_id": index["id"], "owner": user["username"] if user else None,
                          "shares": app.store.list_shares(index["id"])})


def _grantee(app: App, value: str) -> str:
    """A user name, a user id, or `*` / `everyone`."""
    if value in (EVERYONE, "everyone"):
        return EVERYONE
    user = app.store.user_by_name(value) or app.store.get_user(value)
    if user is None:
        raise ApiError(404, "user_not_found", f"no user {value!r}")
    return str(user["id"])


def put_share(app: App, req: Request) -> Response:
    """`{"user": "<name>" | "everyone", "access": "read" | "write"}`; sharing again changes the access."""
    index = index_or_404(app, req.params["index_id"])
    data = req.json()
    grantee = _grantee(app, require_str(data, "user", max_len=200).strip())
    access = data.get("access", "read")
    if access not in ACCESS:
        raise ApiError(400, "invalid_field", "'access' must be 'read' or 'write'")
    app.store.put_share(index["id"], grantee, access)
    return Response.json({"index_id": index["id"], "shares": app.store.list_shares(index["id"])},
                         audit={"grantee": grantee, "access": access})


def remove_share(app: App, req: Request) -> Response:
    """Revoke: the gateway refuses at once; the RAG API refuses older grants at their next use (GRANT_CHECK_S)."""
    index = index_or_404(app, req.params["index_id"])
    grantee = _grantee(app, req.params["grantee"])
    removed = app.store.remove_share(index["id"], grantee)
    if removed:
        app.store.bump_grant_epoch(grantee)  # `*` for everyone: grants already issued are refused within seconds
    return Response.json({"index_id": index["id"], "removed": removed, "shares": app.store.list_shares(index["id"])},
                         audit={"grantee": grantee, "removed": removed})
