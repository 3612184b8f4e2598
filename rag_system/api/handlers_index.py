"""`/index`, `/index/jobs/...`, `/indexes/...`: index writes go through the job queue."""

from __future__ import annotations

import re
import time

from common.errors import ApiError
from common.http import Response
from common.sse import SSEStream
from rag_system.api.jobs import Job
from rag_system.api.messages import Request, Stream
from rag_system.api.options import index_name, parse_index
from rag_system.api.paths import checked_paths
from rag_system.config import Settings
from rag_system.indexing.embedder_choice import recorded_embedder
from rag_system.embedding.registry import CHOICES, name_for_model

#: How long `DELETE /indexes/<name>` waits for the writer before answering 202.
DELETE_WAIT_S = 120.0
_DOCUMENT_ID = re.compile(r"^[0-9a-f]{64}(-[0-9]{1,6})?$")
EVENTS_POLL_S = 1.0


def require_writer(request: Request) -> None:
    """Index writes belong to the one writer; a query replica refuses them and says where to go."""
    settings = request.service.settings
    if settings.role == "reader":
        where = settings.writer_url or "the RAG API started with DOCENT_ROLE=writer (DOCENT_WRITER_URL is unset)"
        raise ApiError(409, "read_only_replica",
                       f"this RAG API is a query replica (DOCENT_ROLE=reader) and does not write indexes; "
                       f"send index requests to the writer: {where}")


def start_job(request: Request) -> Response:
    require_writer(request)
    spec = parse_index(request.json())
    paths = checked_paths(request.service.roots, spec.paths)
    embedder, warnings = spec.embedder, []
    if embedder is None and spec.embedding_model:
        embedder = embedder_for_model(spec.embedding_model, request.service.settings)
        if embedder is None:
            warnings.append(f"embedding_model {spec.embedding_model!r} is not available here; the index is built "
                            "with its own or the default embedder (`python -m rag_system embedders` lists them)")
    check_embedder(request, spec.index, embedder)
    job = request.service.jobs.submit_build(spec.index, paths, embedder, spec.chunk_size, spec.remove)
    return Response(202, {"job_id": job.job_id, "index": job.index, "state": job.state,
                          "chunk_size": spec.chunk_size, "embedder": embedder, "warnings": warnings},
                    headers={"Location": f"/index/jobs/{job.job_id}"})


def embedder_for_model(value: str, settings: Settings) -> str | None:
    """localGPT's `embedding_model` (a model id, or one of our embedder names) as a registered embedder name."""
    return value if value in CHOICES else name_for_model(value, settings)


def check_embedder(request: Request, index: str, wanted: str | None) -> None:
    """409 before queueing when an existing index was built with another embedder than the one asked for."""
    if wanted is None or wanted == "auto":
        return
    own = recorded_embedder(request.service.db, index, request.service.settings)
    if own is not None and own != wanted:
        raise ApiError(409, "embedder_mismatch",
                       f"index {index!r} was built with the {own} embedder; an index keeps its embedder, "
                       f"so build a new index to use {wanted}")


def _job(request: Request) -> Job:
    job = request.service.jobs.get(request.params["job_id"])
    if job is None:
        raise ApiError(404, "job_not_found",
                       f"no index job {request.params['job_id']!r} (finished jobs are kept for a while only)")
    request.caller.require_indexes([job.index])
    return job


def job_status(request: Request) -> Response:
    return Response(200, _job(request).to_json())


def cancel_job(request: Request) -> Response:
    require_writer(request)
    job = _job(request)
    request.service.jobs.cancel(job.job_id)
    return Response(200, job.to_json())


def job_events(request: Request) -> Stream:
    job = _job(request)

    def run(sse: SSEStream) -> None:
        cursor = 0
        while not sse.cancel.is_set():
            events, finished = job.wait_events(cursor, EVENTS_POLL_S)
            for event in events:
                if not sse.send(str(event.get("type", "event")), event):
                    return
            cursor += len(events)
            if finished and not events:
                return

    return Stream(run)


def list_all(request: Request) -> Response:
    sizes = [(name, n) for name, n in request.service.index_sizes() if request.caller.may_read(name)]
    return Response(200, {"indexes": [{"name": name, "chunks": n} for name, n in sizes]})


def _wait(job: Job) -> bool:
    """Wait for a queued write (at most DELETE_WAIT_S); True when it finished."""
    deadline = time.monotonic() + DELETE_WAIT_S
    while not job.finished and time.monotonic() < deadline:
        job.wait_events(len(job.events), 1.0)
    return job.finished


def remove_document(request: Request) -> Response:
    """One document out of an index (through the writer): its chunks, windows, vectors, manifest record.

    `?path=` names one indexed file when the same content is indexed under several names."""
    require_writer(request)
    name = index_name(request.params["name"], "name")
    document_id = request.params["document_id"]
    if not _DOCUMENT_ID.match(document_id):
        raise ApiError(400, "invalid_document_id", "a document id is the file's sha256 (64 hex characters, "
                       "or a mailbox part <sha256>-<n>)")
    path = (request.query.get("path") or [""])[-1]
    job = request.service.jobs.submit_remove(name, document_id, path or None)
    if not _wait(job):
        return Response(202, {"removed": False, "job_id": job.job_id, "state": job.state,
                              "message": "the removal is queued behind a running job; follow the job"})
    if job.state != "done":
        code = job.result.get("code") or "remove_failed"
        raise ApiError(404 if code in ("index_not_found", "document_not_found") else 500, code,
                       job.error or "the removal failed")
    return Response(200, {"removed": True, **job.result, "job_id": job.job_id})


def delete_index(request: Request) -> Response:
    require_writer(request)
    name = index_name(request.params["name"], "name")
    request.service.sync.forget(name)  # a deleted index is no longer synced
    job = request.service.jobs.submit_delete(name)
    if not _wait(job):
        return Response(202, {"deleted": False, "job_id": job.job_id, "state": job.state,
                              "message": "the deletion is queued behind a running job; follow the job"})
    if job.state != "done":
        raise ApiError(500, "delete_failed", job.error or "the deletion failed")
    if not job.result.get("deleted"):
        raise ApiError(404, "index_not_found", f"index {name!r} does not exist")
    return Response(200, {"deleted": True, "index": name, "job_id": job.job_id})
