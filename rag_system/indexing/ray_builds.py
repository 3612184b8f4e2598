"""The RAG API's index builds handed to the Ray cluster `DOCENT_RAY_ADDRESS` names (issue 46).

Why a class of its own: the API builds on one writer thread for its whole life, and
starting a local Ray cluster takes seconds (4-5 s here) while joining a remote one
opens a connection, so the first distributed build connects and later builds reuse
the connection; the API's shutdown closes it (stopping a local cluster). Nothing
here imports Ray until the first build, so an API without `DOCENT_RAY_ADDRESS`
never loads it.

A failure of Ray itself (the cluster cannot be started or reached, a worker dies,
the connection drops) becomes a `DistributedBuildError` that says so: the job fails
with that message, and the connection is dropped so the next build connects again.
Everything else a build raises (a vanished path, an embedder mismatch, a cancel)
passes through unchanged, as from `build_index`.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path

from rag_system.config import Settings
from rag_system.embedding.base import Embedder
from rag_system.indexing.builder import BuildCancelled
from rag_system.indexing.distributed import DistributedBuildError, build_index_distributed, ray_cluster
from rag_system.indexing.events import BuildSummary, EventSink, ignore_event

log = logging.getLogger(__name__)


class RayBuilds:
    """Builds on the cluster at `address` (`local:N` or `ray://host:port`), over one lazily made connection."""

    def __init__(self, address: str) -> None:
        self.address = address
        self._lock = threading.Lock()
        self._connection: ExitStack | None = None

    @property
    def connected(self) -> bool:
        return self._connection is not None

    def build(self, inputs: Sequence[Path], index: str, settings: Settings, *, embedder: Embedder | None = None,
              embedder_name: str | None = None, on_event: EventSink = ignore_event,
              cancel: threading.Event | None = None, remove: Sequence[str] = (), hold: frozenset[Path] = frozenset(),
              settle_s: float = 0.0) -> BuildSummary:
        """`build_index_distributed` on the cluster, connecting first if this process is not connected yet.

        The arguments are `build_index`'s, so a build job and a sync can call either."""
        with self._lock:
            self._connect()
            try:
                return build_index_distributed(inputs, index, settings, embedder=embedder,
                                               embedder_name=embedder_name, on_event=on_event, cancel=cancel,
                                               remove=remove, hold=hold, settle_s=settle_s)
            except (BuildCancelled, DistributedBuildError):
                raise
            except Exception as exc:
                if not _is_ray_failure(exc):
                    raise
                self._disconnect()
                raise DistributedBuildError(
                    f"the Ray cluster {self.address} failed during the build of {index!r} "
                    f"({type(exc).__name__}: {_last_line(exc)}); nothing was committed: "
                    "the next build connects again") from exc

    def close(self, timeout: float = 10.0) -> None:
        """Disconnect (a local cluster stops); the next build would connect again.

        Waits up to `timeout` for a build still running (the API cancels it first); past that the API's
        shutdown goes on, and Ray's own exit handler disconnects when the process ends."""
        if not self._lock.acquire(timeout=timeout):
            log.warning("a build on the Ray cluster %s is still running; leaving it to Ray's exit handler",
                        self.address)
            return
        try:
            self._disconnect()
        finally:
            self._lock.release()

    def _connect(self) -> None:
        if self._connection is not None:
            return
        stack = ExitStack()
        try:
            stack.enter_context(ray_cluster(self.address))
        except Exception as exc:  # Ray raises ValueError, ConnectionError, RuntimeError... for one cause
            stack.close()
            raise DistributedBuildError(
                f"could not start or join the Ray cluster DOCENT_RAY_ADDRESS={self.address} "
                f"({type(exc).__name__}: {_last_line(exc)}); nothing was built") from exc
        self._connection = stack
        log.info("index builds go to the Ray cluster %s", self.address)

    def _disconnect(self) -> None:
        stack, self._connection = self._connection, None
        if stack is None:
            return
        try:
            stack.close()
        except Exception:  # a cluster already gone cannot be shut down cleanly; nothing more to do
            log.warning("disconnecting from the Ray cluster %s failed", self.address, exc_info=True)


def _is_ray_failure(exc: BaseException) -> bool:
    """Whether `exc` comes from Ray or the connection to it, not from the build's own inputs."""
    import ray.exceptions

    return isinstance(exc, (ray.exceptions.RayError, ConnectionError)) or type(exc).__module__.startswith("ray.")


def _last_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[-1] if text else "no message"

