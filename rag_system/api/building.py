"""A question on an index whose build is queued or running: said plainly, never a refusal.

An index being built for the first time has nothing to search yet; answering from it would be a
confident "the documents do not say", which is wrong. So the question is refused with 409
`index_building` and a message that says how far the build is. An index that is being
*rebuilt* (an incremental build adding files) still has its previous chunks: the question is
answered from them, with a warning that the build is not finished. Only the writer knows its
jobs; a query replica (DOCENT_ROLE=reader) cannot tell and answers from what it can read.
"""

from __future__ import annotations

from collections.abc import Callable

from common.errors import ApiError
from rag_system.api.jobs import Job, JobQueue


def building_warnings(jobs: JobQueue, indexes: tuple[str, ...],
                      sizes: Callable[[], list[tuple[str, int]]]) -> list[str]:
    """Warnings for indexes being rebuilt; raises 409 when an index being built has nothing yet.

    `sizes` (index, chunk count) is only asked for when a build is active (it opens tables)."""
    warnings: list[str] = []
    for index in indexes:
        job = jobs.active_build(index)
        if job is None:
            continue
        if dict(sizes()).get(index, 0) == 0:
            raise ApiError(409, "index_building", f"index {index!r} is still being indexed ({_progress(job)}); "
                           "ask again when the build has finished", index=index, job_id=job.job_id,
                           state=job.state)
        if job.kind == "sync":
            continue  # a sync replaces each document in one commit: every answer reads the old or the new one
        warnings.append(f"index {index!r} is still being indexed ({_progress(job)}); this answer comes from "
                        "the documents indexed before this build")
    return warnings


def _progress(job: Job) -> str:
    if job.state == "queued":
        return "queued behind another build"
    return f"{job.done} of {job.total} files done" if job.total else "starting"
