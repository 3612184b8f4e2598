"""`index` through a RAG API that is already running over the same store.

Why: the RAG API alone owns LanceDB (Documentation/architecture.md), so a CLI
build beside a running API would be a second writer to the same tables; and
the API has LanceDB and the embedder loaded, so `index` with nothing to do
answers in about a second instead of paying for `import lancedb` (2-3 s on 2
cores) and, for new files, a model load. The build runs as the API's own
job: its events drive the same progress bar and its summary is the same
`BuildSummary` JSON. A path the API may not read (outside its upload folder
and `DOCENT_INDEX_ROOTS`), or a query replica, makes the CLI build in this
process as before, and says so. Standard library only.
"""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from common.sse import read_frames
from rag_system.indexing.events import BuildEvent, EventSink
from rag_system.cli.running_api import ApiCallError, RunningApi, api_error

#: Answers after which this process builds the index itself instead (the API cannot take this build).
LOCAL_FALLBACK = frozenset({"path_not_allowed", "read_only_replica"})
#: The longest a build may run before the CLI stops following it (the job itself goes on).
FOLLOW_TIMEOUT_S = 24 * 3600.0


class RemoteBuildError(RuntimeError):
    """The RAG API refused or failed the build: `status` (4xx: the request's fault), `code`, message."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code = status, code


def index_through(api: RunningApi, paths: Sequence[Path], index: str, embedder: str | None,
                  on_event: EventSink) -> dict[str, Any] | None:
    """Build `index` from `paths` as a job of the running API; the job's summary, or None to build here.

    Ctrl-C cancels the job (the API keeps what it had committed, as a local build would)."""
    body: dict[str, Any] = {"index": index, "paths": [str(Path(p).expanduser().absolute()) for p in paths]}
    if embedder:
        body["embedder"] = embedder
    try:
        job = api.call("POST", "/index", body)
    except ApiCallError as exc:
        if exc.code in LOCAL_FALLBACK:
            return None
        raise RemoteBuildError(exc.status, exc.code, str(exc)) from exc
    try:
        return _follow(api, str(job["job_id"]), on_event)
    except KeyboardInterrupt:
        try:
            api.call("DELETE", f"/index/jobs/{job['job_id']}", timeout=5.0)
        except (OSError, ApiCallError):
            pass  # the API is gone or the job already ended: nothing left to cancel
        raise


def _follow(api: RunningApi, job_id: str, on_event: EventSink) -> dict[str, Any]:
    """The job's events passed on as `BuildEvent`s until its terminal `done`/`failed` event."""
    request = urllib.request.Request(f"{api.url}/index/jobs/{job_id}/events", method="GET")
    if api.token:
        request.add_header("Authorization", f"Bearer {api.token}")
    try:
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(request, timeout=FOLLOW_TIMEOUT_S) as resp:
            for kind, data in read_frames(resp):
                if kind == "done":
                    return dict(data.get("summary") or {})
                if kind == "failed":
                    raise RemoteBuildError(500, "build_failed", str(data.get("error") or "the build failed"))
                fields = {k: v for k, v in data.items() if k not in ("type", "path")}
                on_event(BuildEvent(kind, data.get("path"), fields))
    except urllib.error.HTTPError as exc:
        answer = api_error(exc)
        raise RemoteBuildError(answer.status, answer.code, str(answer)) from exc
    raise RemoteBuildError(502, "stream_ended", "the RAG API ended the job's event stream before the build ended")
