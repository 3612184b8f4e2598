"""Synced folders through the gateway: `/indexes/<id>/sync...` passed to the RAG API's writer.

The writer owns bindings, watching and syncing (rag_system/api/sync_service.py);
the gateway checks that the index is one of its own, forwards, and marks an
index that a sync has filled as ready, so its card says so.
"""

from __future__ import annotations

from typing import Any

from backend.app import App
from backend.library import index_or_404
from backend.web import Request, require_str
from common.errors import ApiError
from common.http import Response

FOLDER_MAX = 4096
#: The status of an index the RAG API does not have yet (the shape of its `GET /indexes/<name>/sync`).
NOT_SYNCED: dict[str, Any] = {"folders": [], "embedder": None, "last_sync": None, "history": [], "state": "idle",
                              "job_id": None, "pending": False}


def status(app: App, req: Request) -> Response:
    index = index_or_404(app, req.params["index_id"])
    try:
        code, body = app.rag.sync("GET", index["id"], request_id=req.request_id)
    except ApiError as err:
        if err.code != "index_not_found":
            raise
        code, body = 200, NOT_SYNCED  # created here, not built or bound yet
    _mark_ready(app, index, body)
    return Response.json({**body, "index": index["id"], "index_id": index["id"]}, code)


def trigger(app: App, req: Request) -> Response:
    index = index_or_404(app, req.params["index_id"])
    code, body = app.rag.sync("POST", index["id"], payload={}, request_id=req.request_id)
    return Response.json({**body, "index_id": index["id"]}, code)


def bind(app: App, req: Request) -> Response:
    index = index_or_404(app, req.params["index_id"])
    embedder = index["metadata"].get("embedder")  # chosen when the index was created
    payload = {**_folder(req), **({"embedder": embedder} if isinstance(embedder, str) and embedder else {})}
    code, body = app.rag.sync("POST", index["id"], "/folders", payload, request_id=req.request_id)
    app.store.update_index_metadata(index["id"], {"synced": True})
    return Response.json({**body, "index_id": index["id"]}, code)


def unbind(app: App, req: Request) -> Response:
    index = index_or_404(app, req.params["index_id"])
    code, body = app.rag.sync("DELETE", index["id"], "/folders", _folder(req), request_id=req.request_id)
    app.store.update_index_metadata(index["id"], {"synced": bool(body.get("folders"))})
    return Response.json({**body, "index_id": index["id"]}, code)


def _folder(req: Request) -> dict[str, Any]:
    return {"folder": require_str(req.json(), "folder", max_len=FOLDER_MAX)}


def _mark_ready(app: App, index: dict[str, Any], body: dict[str, Any]) -> None:
    """A created index whose folder has been synced without error is ready to be asked."""
    last = body.get("last_sync") if isinstance(body.get("last_sync"), dict) else None
    if last and not last.get("error") and index["metadata"].get("status") in (None, "created"):
        app.store.update_index_metadata(index["id"], {"status": "ready", "synced": True})
