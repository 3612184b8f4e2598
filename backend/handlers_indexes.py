"""Index routes: CRUD, uploads, builds (through the RAG API) and build progress."""

from __future__ import annotations

import os
from typing import Any

from backend.app import App
from backend.index_discovery import adopt_external_indexes
from backend.library import index_or_404, remove_files, start_build, store_uploads
from backend.web import Request, not_found, optional_str, require_str
from common.errors import ApiError
from common.http import Response

TERMINAL_JOB_STATES = {"done": "ready", "failed": "failed", "cancelled": "cancelled"}


def list_indexes(app: App, req: Request) -> Response:
    adopt_external_indexes(app, req.request_id)  # indexes built with the CLI show up too
    found = app.store.list_indexes()
    return Response.json({"indexes": found, "total": len(found)})


def create_index(app: App, req: Request) -> Response:
    data = req.json()
    name = require_str(data, "name", max_len=200).strip()
    description = optional_str(data, "description", "", max_len=2000)
    metadata = {} if data.get("metadata") is None else data["metadata"]
    if not isinstance(metadata, dict):
        raise ApiError(400, "invalid_field", "'metadata' must be an object")
    # The embedder the index will be built with (the RAG API checks the name; an index keeps it).
    embedder = optional_str(data, "embedder", "", max_len=40).strip()
    if embedder:
        metadata = {**metadata, "embedder": embedder}
    index = app.store.create_index(name, description, {"status": "created", **metadata})
    return Response.json({"index_id": index["id"], "index": index}, 201)


def get_index(app: App, req: Request) -> Response:
    """The index object itself (as localGPT returned it), its build state refreshed when a build is running."""
    index = index_or_404(app, req.params["index_id"])
    meta = index["metadata"]
    if meta.get("status") == "building" and meta.get("last_job_id"):
        try:
            _refresh_job(app, index, app.rag.job(meta["last_job_id"], req.request_id))
            index = index_or_404(app, index["id"])
        except ApiError:
            pass  # the RAG API is down or forgot the job: report what we know
    return Response.json(index)


def delete_index(app: App, req: Request) -> Response:
    """Delete the table (through the RAG API) first, then the rows, then the uploaded files."""
    index = index_or_404(app, req.params["index_id"])
    table_deleted = app.rag.delete_index(index["id"], req.request_id)
    paths = app.store.delete_index(index["id"]) or []
    removed = remove_files(app, paths)
    return Response.json({"message": "Index deleted successfully", "index_id": index["id"], "deleted": True,
                          "table_deleted": table_deleted, "files_removed": removed})


def upload(app: App, req: Request) -> Response:
    index = index_or_404(app, req.params["index_id"])
    saved = store_uploads(app, req, index_id=index["id"])
    return Response.json({"message": f"Uploaded {len(saved)} files", "uploaded_files": saved})


def build(app: App, req: Request) -> Response:
    index = index_or_404(app, req.params["index_id"])
    options = req.json(required=False)
    result = start_build(app, index["id"], options, req.request_id)
    return Response.json({**result, "index_id": index["id"], "status": "building",
                          "index": app.store.get_index(index["id"])}, 202)


def job(app: App, req: Request) -> Response:
    """Build progress, proxied from the RAG API; a finished job updates the index and its documents."""
    index = index_or_404(app, req.params["index_id"])
    job_id = req.params["job_id"]
    known = app.store.get_job(job_id)
    if known is None or known["index_id"] != index["id"]:
        raise not_found("job", job_id)
    data = app.rag.job(job_id, req.request_id)
    _refresh_job(app, index, data)
    return Response.json({**data, "index_id": index["id"]})


def _refresh_job(app: App, index: dict[str, Any], data: dict[str, Any]) -> None:
    state = data.get("state")
    job_id = data.get("job_id")
    if isinstance(job_id, str) and isinstance(state, str):
        app.store.update_job(job_id, state)
    if state not in TERMINAL_JOB_STATES or index["metadata"].get("last_job_id") != job_id:
        return
    app.store.update_index_metadata(index["id"], {"status": TERMINAL_JOB_STATES[state],
                                                  "last_build": data.get("summary"),
                                                  "last_error": data.get("error")})
    files = {os.path.realpath(str(f.get("path"))): f for f in data.get("files") or [] if isinstance(f, dict)}
    for doc in index["documents"]:
        entry = files.get(os.path.realpath(doc["stored_path"]))
        status = "indexed" if state == "done" else state
        pages: int | None = None
        error: str | None = None
        if entry is not None:
            if entry.get("error") or entry.get("state") == "failed":
                status, error = "failed", str(entry.get("error") or "the file could not be indexed")[:2000]
            else:
                status = "indexed"
            # A duplicate's pages are those of the file with the same content.
            owner = files.get(os.path.realpath(str(entry["same_content_as"]))) if entry.get("same_content_as") else None
            pages = _count((owner or entry).get("pages"))
        app.store.set_document_result(doc["id"], status, pages, error)


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None
