"""Several RAG API query replicas behind one gateway, and the one writer (Documentation/scale-out.md).

Chat requests go round-robin over the replicas that are in service. A replica
that cannot be reached or answers 5xx is taken out of service and the request
is retried once on each other replica in turn; a replica that times out is
taken out too, but the request is not repeated (it may still be running
there, and a second 300 s wait helps nobody). A replica out of service is
put back only after its `/health` answers 200, probed at most every
`RETRY_AFTER_S`. Index requests (build, job status, delete) always go to the
writer: it is the only process that may write the store.

The methods are those of `RagClient`, so the handlers do not know whether one
RAG API or several are behind the gateway.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from backend.rag_client import RagClient
from common.errors import ApiError

log = logging.getLogger(__name__)

#: How long a failed replica stays out before its health is probed again.
RETRY_AFTER_S = 5.0

T = TypeVar("T")


class RagReplicas:
    def __init__(self, urls: Sequence[str], writer_url: str, *, token: str | Callable[[], str] = "", timeout_s: float = 300.0,
                 index_timeout_s: float = 60.0, retry_after_s: float = RETRY_AFTER_S) -> None:
        if not urls:
            raise ValueError("at least one RAG API replica URL is required")
        self.replicas = [RagClient(u, token=token, timeout_s=timeout_s, index_timeout_s=index_timeout_s)
                         for u in urls]
        self.writer = RagClient(writer_url, token=token, timeout_s=timeout_s, index_timeout_s=index_timeout_s)
        self.retry_after_s = retry_after_s
        self._turn = itertools.count()
        self._lock = threading.Lock()
        self._out_until: dict[str, float] = {}  # base_url -> monotonic time of the next health probe

    # -- replica choice ------------------------------------------------------------
    def in_service(self, client: RagClient) -> bool:
        """Whether `client` may take requests now: never failed, or its health probe passes again."""
        with self._lock:
            until = self._out_until.get(client.base_url)
            if until is None:
                return True
            if time.monotonic() < until:
                return False
            self._out_until[client.base_url] = time.monotonic() + self.retry_after_s  # one prober at a time
        try:
            healthy = client.health()[0] == 200
        except ApiError:
            healthy = False
        if healthy:
            with self._lock:
                self._out_until.pop(client.base_url, None)
            log.info('{"event": "rag_replica_back", "url": "%s"}', client.base_url)
        return healthy

    def take_out(self, client: RagClient, why: str) -> None:
        with self._lock:
            self._out_until[client.base_url] = time.monotonic() + self.retry_after_s
        log.warning('{"event": "rag_replica_out", "url": "%s", "error": "%s"}', client.base_url,
                    why.replace('"', "'"))

    def _candidates(self) -> list[RagClient]:
        """Replicas in round-robin order from this request's turn, those in service first."""
        start = next(self._turn) % len(self.replicas)
        ordered = self.replicas[start:] + self.replicas[:start]
        healthy = [c for c in ordered if self.in_service(c)]
        # With every replica out, still try them all: one may have come back since.
        return healthy or ordered

    def _spread(self, call: Callable[[RagClient], T]) -> T:
        failures: list[ApiError] = []
        for client in self._candidates():
            try:
                return call(client)
            except ApiError as err:
                if err.status == 504:
                    self.take_out(client, err.message)
                    raise
                if err.status != 502:
                    raise  # the request itself was refused: another replica would refuse it too
                self.take_out(client, err.message)
                failures.append(err)
        last = failures[-1]
        raise ApiError(502, last.code, f"no RAG API replica could answer: {last.message}")

    # -- RagClient's methods -----------------------------------------------------------
    def health(self) -> tuple[int, dict[str, Any]]:
        """A replica's health (200 while any replica is ready), plus every replica's and the writer's state."""
        states: list[dict[str, Any]] = []
        first: tuple[int, dict[str, Any]] | None = None
        for client in self.replicas:
            try:
                status, body = client.health()
            except ApiError as err:
                states.append({"url": client.base_url, "ready": False, "error": err.message})
                continue
            states.append({"url": client.base_url, "ready": status == 200})
            if first is None or (status == 200 and first[0] != 200):
                first = (status, body)
        if first is None:
            raise ApiError(502, "rag_api_unavailable",
                           f"no RAG API replica is reachable ({', '.join(c.base_url for c in self.replicas)})")
        status, body = first
        return status, {**body, "replicas": states, "writer": self.writer.base_url}

    def models(self, request_id: str | None = None) -> dict[str, Any]:
        return self._spread(lambda c: c.models(request_id))

    def chat(self, payload: dict[str, Any], request_id: str | None = None) -> dict[str, Any]:
        return self._spread(lambda c: c.chat(payload, request_id))

    def verify(self, payload: dict[str, Any], request_id: str | None = None) -> dict[str, Any]:
        return self._spread(lambda c: c.verify(payload, request_id))

    def open_chat_stream(self, payload: dict[str, Any], request_id: str | None = None) -> Any:
        return self._spread(lambda c: c.open_chat_stream(payload, request_id))

    def start_index(self, index: str, paths: list[str], request_id: str | None = None,
                    embedder: str | None = None, *, chunk_size: int | None = None,
                    embedding_model: str | None = None, remove_paths: list[str] | None = None) -> dict[str, Any]:
        return self.writer.start_index(index, paths, request_id, embedder, chunk_size=chunk_size,
                                       embedding_model=embedding_model, remove_paths=remove_paths)

    def remove_document(self, name: str, document_id: str, path: str, request_id: str | None = None) -> bool:
        return self.writer.remove_document(name, document_id, path, request_id)

    def job(self, job_id: str, request_id: str | None = None) -> dict[str, Any]:
        return self.writer.job(job_id, request_id)

    def delete_index(self, name: str, request_id: str | None = None) -> bool:
        return self.writer.delete_index(name, request_id)

    def indexes(self, request_id: str | None = None) -> list[dict[str, Any]]:
        return self.writer.indexes(request_id)

    def sync(self, method: str, name: str, tail: str = "", payload: dict[str, Any] | None = None,
             request_id: str | None = None) -> tuple[int, dict[str, Any]]:
        return self.writer.sync(method, name, tail, payload, request_id)  # the writer watches and syncs
