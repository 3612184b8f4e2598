"""A build's outcome folded into the index and its documents, wherever an index is read.

The RAG API runs builds; the gateway learns the end of one when something reads it. Every
route that shows an index (`GET /indexes`, `GET /indexes/<id>`, `GET /sessions/<id>/indexes`)
refreshes a `building` one, so no list keeps saying `building` after the job ended.
"""

from __future__ import annotations

import os
import time
from typing import Any

from backend.app import App
from common.errors import ApiError

TERMINAL_JOB_STATES = {"done": "ready", "failed": "failed", "cancelled": "cancelled"}


def refresh_if_building(app: App, index: dict[str, Any], request_id: str) -> dict[str, Any]:
    """The index as it is now: a running build's end is asked of the RAG API and recorded."""
    meta = index["metadata"]
    if meta.get("status") != "building" or not meta.get("last_job_id"):
        return index
    try:
        refresh_job(app, index, app.rag.job(meta["last_job_id"], request_id))
    except ApiError:
        return index  # the RAG API is down or forgot the job: report what we know
    return app.store.get_index(index["id"]) or index


def wait_for_build(app: App, index_id: str, job_id: str, request_id: str, timeout_s: float,
                   poll_s: float = 0.5) -> dict[str, Any] | None:
    """Follow a job to its end, recording it; None when it is still running after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while True:
        data = app.rag.job(job_id, request_id)
        index = app.store.get_index(index_id)
        if index is not None:
            refresh_job(app, index, data)
        if data.get("state") in TERMINAL_JOB_STATES:
            return data
        if time.monotonic() >= deadline:
            return None
        time.sleep(poll_s)


def refresh_job(app: App, index: dict[str, Any], data: dict[str, Any]) -> None:
    state = data.get("state")
    job_id = data.get("job_id")
    if isinstance(job_id, str) and isinstance(state, str):
        app.store.update_job(job_id, state)
    if state not in TERMINAL_JOB_STATES or index["metadata"].get("last_job_id") != job_id:
        return
    app.store.update_index_metadata(index["id"], {"status": TERMINAL_JOB_STATES[state],
                                                  "last_build": data.get("summary"),
                                                  "last_error": data.get("error"),
                                                  "built_with_embedder": data.get("embedder")})
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
