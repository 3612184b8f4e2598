"""Index routes: CRUD, uploads, builds (through the RAG API) and build progress."""

from __future__ import annotations

from backend.access import can_read_index
from backend.app import App
from backend.builds import refresh_if_building, refresh_job, wait_for_build
from backend.index_discovery import adopt_external_indexes
from backend.legacy import present_index
from backend.library import index_or_404, remove_files, start_build, store_uploads
from backend.web import Request, not_found, optional_str, require_str
from common.errors import ApiError
from common.http import Response

#: Keys only localGPT's index form sends with a build.
_LOCALGPT_FORM = {"latechunk", "doclingChunk", "docling_chunk", "batchSizeEmbed", "batch_size_embed", "enableEnrich"}


def list_indexes(app: App, req: Request) -> Response:
    adopt_external_indexes(app, req.request_id)  # indexes built with the CLI show up too
    found = [present_index(refresh_if_building(app, i, req.request_id)) for i in app.store.list_indexes()
             if req.principal.unrestricted or can_read_index(app.store, req.principal, i["id"])]
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
    if req.principal.user_id:
        app.store.set_owner("indexes", index["id"], req.principal.user_id)
    return Response.json({"index_id": index["id"], "index": present_index(index)}, 201)


def get_index(app: App, req: Request) -> Response:
    """The index object itself (as localGPT returned it), its build state refreshed when a build is running."""
    index = refresh_if_building(app, index_or_404(app, req.params["index_id"]), req.request_id)
    return Response.json(present_index(index))


def delete_index(app: App, req: Request) -> Response:
    """Delete the table (through the RAG API) first, then the rows, then the uploaded files."""
    index = index_or_404(app, req.params["index_id"])
    table_deleted = app.rag.delete_index(index["id"], req.request_id)
    paths = app.store.delete_index(index["id"]) or []
    removed = remove_files(app, paths)
    return Response.json({"message": "Index deleted successfully", "index_id": index["id"], "deleted": True,
                          "table_deleted": table_deleted, "files_removed": removed})


def delete_document(app: App, req: Request) -> Response:
    """One document out of the index: its chunks through the RAG API (the single writer) first, then its
    row, then its uploaded file. If the RAG API cannot remove the chunks, nothing else changes."""
    index = index_or_404(app, req.params["index_id"])
    doc = app.store.index_document(index["id"], req.params["document_id"])
    if doc is None:
        raise ApiError(404, "document_not_found", f"index {index['name']!r} has no document "
                       f"{req.params['document_id']!r} (already deleted, or in another index)")
    had_chunks = app.rag.remove_document(index["id"], doc["sha256"], doc["stored_path"], req.request_id)
    removed = remove_files(app, app.store.remove_documents([doc["id"]]))
    return Response.json({"message": f"Removed {doc['filename']}", "deleted": True, "index_id": index["id"],
                          "document_id": doc["id"], "filename": doc["filename"], "chunks_removed": had_chunks,
                          "files_removed": removed, "index": present_index(app.store.get_index(index["id"]) or index)},
                         audit={"document_id": doc["id"], "filename": doc["filename"]})


def upload(app: App, req: Request) -> Response:
    index = index_or_404(app, req.params["index_id"])
    saved = store_uploads(app, req, index_id=index["id"])
    return Response.json({"message": f"Uploaded {len(saved)} files", "uploaded_files": saved})


def build(app: App, req: Request) -> Response:
    """202 with the job (Docent's asynchronous build), or, for localGPT's client, the finished build.

    localGPT's client opens the chat as soon as its build call returns, so a call that carries its
    form's options (`latechunk`, `doclingChunk`, ...) or `"wait": true` waits for the job."""
    index = index_or_404(app, req.params["index_id"])
    options = req.json(required=False)
    result = start_build(app, index["id"], options, req.request_id)
    if options.get("wait") is True or (options.get("wait") is None and _LOCALGPT_FORM & set(options)):
        done = wait_for_build(app, index["id"], result["job_id"], req.request_id, app.config.build_wait_s)
        if done is not None:
            index = app.store.get_index(index["id"]) or index
            status = index["metadata"].get("status")
            return Response.json({**result, "index_id": index["id"], "status": status, "job": done,
                                  "response": f"Index build {done.get('state')}", "index": present_index(index)},
                                 200 if done.get("state") == "done" else 422)
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
    refresh_job(app, index, data)
    return Response.json({**data, "index_id": index["id"]})
