"""`/indexes/<name>/sync...`: bind and unbind folders, see the last sync, start one (logic: sync_service.py)."""

from __future__ import annotations

from typing import Callable, ParamSpec, TypeVar

from common.errors import ApiError, bad_request
from common.http import Response
from common.options import normalise_keys
from rag_system.api.handlers_index import check_embedder, require_writer
from rag_system.api.messages import Request
from rag_system.api.options import embedder_option, index_name
from rag_system.api.sync_service import SyncError


def _folder(request: Request) -> str:
    body = normalise_keys(request.json())
    folder = body.get("folder", body.get("path"))
    if not isinstance(folder, str) or not folder or len(folder) > 4096 or "\x00" in folder:
        raise bad_request("folder must be the path of a folder inside the allowed roots", "invalid_folder")
    return folder


P = ParamSpec("P")
T = TypeVar("T")


def _call(fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    try:
        return fn(*args, **kwargs)
    except SyncError as exc:
        raise ApiError(exc.status, exc.code, str(exc)) from exc


def status(request: Request) -> Response:
    name = index_name(request.params["name"], "name")
    request.caller.require_indexes([name])
    if not request.service.sync.known(name):
        raise ApiError(404, "index_not_found", f"no index {name!r} (binding a folder to a new name creates it)")
    return Response(200, request.service.sync.status(name))


def bind(request: Request) -> Response:
    require_writer(request)
    name = index_name(request.params["name"], "name")
    embedder = embedder_option(normalise_keys(request.json()))
    check_embedder(request, name, embedder)
    state, job = _call(request.service.sync.bind, name, _folder(request), embedder)
    return Response(201, {**state, "job_id": job.job_id}, headers={"Location": f"/index/jobs/{job.job_id}"})


def unbind(request: Request) -> Response:
    require_writer(request)
    name = index_name(request.params["name"], "name")
    return Response(200, _call(request.service.sync.unbind, name, _folder(request)))


def trigger(request: Request) -> Response:
    require_writer(request)
    name = index_name(request.params["name"], "name")
    job = _call(request.service.sync.trigger, name, "manual")
    return Response(202, {"job_id": job.job_id, "index": name, "state": job.state},
                    headers={"Location": f"/index/jobs/{job.job_id}"})
