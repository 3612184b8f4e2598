"""`POST /backup`: the index store as a tar stream, read by `python -m backend backup` (indexing/snapshot.py).

Service-only: the copy holds every index, so only the gateway's tools (the service token) may take it.
"""

from __future__ import annotations

import logging

from common.http import Response
from rag_system.api.messages import Request
from rag_system.indexing.snapshot import SnapshotStream

log = logging.getLogger(__name__)


def backup(request: Request) -> Response:
    request.caller.require_service("a backup of the index store")
    snapshots = request.service.snapshots
    snapshot = snapshots.take()
    log.info("backup: %d tables staged (%d files, %d bytes) after %d attempt(s)", len(snapshot.tables),
             snapshot.files, snapshot.bytes, snapshot.attempts)
    return Response(200, SnapshotStream(snapshots, snapshot), content_type="application/x-tar",
                    headers={"X-Docent-Snapshot-Tables": str(len(snapshot.tables))})
