"""The RAG API's two calls to the gateway: read a session's recent turns, post a finished turn.

The RAG API keeps no conversation state: a follow-up that arrives with only a
`session_id` (the browser streams turns to the RAG API directly) is resolved
against the last messages the gateway holds (`read_history`), so it survives a
RAG API restart and reaches any replica.

A streamed turn must be saved even when the browser went away, so the RAG
API sends it to the gateway's internal save endpoint itself. Saving never
blocks a response: turns go onto a bounded queue that one background thread
drains, retrying transient failures with exponential backoff (0.5 s doubling,
capped at 15 s, 8 attempts: about 45 s, long enough for a gateway that was
killed to be restarted by its supervisor). The gateway
de-duplicates by `turn_id`, so a retry after a lost reply is harmless.
Failures are logged (without the turn's text) and counted.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)

# The gateway is local or on a private network: never route it through an HTTP proxy.
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def read_history(base_url: str, token: str, session_id: str, limit: int, exclude_turn: str | None = None,
                 timeout_s: float = 10.0) -> tuple[list[dict[str, Any]], str]:
    """`GET /sessions/<id>/history` of the gateway: the last `limit` messages, oldest first, and the
    session's model (`model_used`, "" when none).

    An unknown session has no history (404 -> [], ""); any other failure raises (`OSError`,
    `urllib.error.HTTPError`, `ValueError`) and the caller decides what to do without it.
    """
    query = urllib.parse.urlencode({"limit": limit, **({"exclude_turn": exclude_turn} if exclude_turn else {})})
    url = f"{base_url.rstrip('/')}/sessions/{urllib.parse.quote(session_id, safe='')}/history?{query}"
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"} if token else {})
    try:
        with _DIRECT.open(request, timeout=timeout_s) as response:
            body = json.loads(response.read())
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            return [], ""
        raise
    history = body.get("history") if isinstance(body, dict) else None
    if not isinstance(history, list):
        raise ValueError("the gateway's history answer has no 'history' list")
    model = body.get("model_used")
    return [m for m in history if isinstance(m, dict)], model if isinstance(model, str) else ""


@dataclass
class SaveStats:
    saved: int = 0
    failed: int = 0
    dropped: int = 0
    retries: int = 0


@dataclass(eq=False)
class _Item:
    session_id: str
    turn: dict[str, Any]
    attempts: int = 0
    not_before: float = field(default_factory=time.monotonic)


class TurnSaver:
    def __init__(self, base_url: str, token: str | Callable[[], str] = "", *, attempts: int = 8, backoff_s: float = 0.5,
                 max_backoff_s: float = 15.0, timeout_s: float = 10.0, max_queue: int = 1000) -> None:
        self.base_url = base_url.rstrip("/")
        self._token = token  # a callable: the service token changes when accounts turn on (access.ServiceAccess)
        self.attempts = attempts
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self.timeout_s = timeout_s
        self.stats = SaveStats()
        self._queue: queue.Queue[_Item | None] = queue.Queue(max_queue)
        self._retry: list[_Item] = []
        self._thread = threading.Thread(target=self._run, name="docent-turn-saver", daemon=True)
        self._pending = 0
        self._done = threading.Condition()
        self._stopping = False

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        try:
            self._queue.put_nowait(None)
        except queue.Full:
            pass
        self._thread.join(timeout)

    def submit(self, session_id: str, turn: dict[str, Any]) -> None:
        """Queue one turn; never blocks (a full queue drops the turn with an error log)."""
        with self._done:
            self._pending += 1
        try:
            self._queue.put_nowait(_Item(session_id, turn))
        except queue.Full:
            self._settled()
            self.stats.dropped += 1
            log.error("turn %s for session %s dropped: save queue full", turn.get("turn_id"), session_id)

    def wait_idle(self, timeout: float) -> bool:
        """For tests and shutdown: wait until every queued turn was saved or given up."""
        with self._done:
            return self._done.wait_for(lambda: self._pending == 0, timeout)

    def _settled(self) -> None:
        with self._done:
            self._pending -= 1
            self._done.notify_all()

    def url(self, session_id: str) -> str:
        return f"{self.base_url}/sessions/{urllib.parse.quote(session_id, safe='')}/messages/save"

    def _run(self) -> None:
        while not (self._stopping and not self._retry):
            wait = None
            if self._retry:
                wait = max(0.0, min(i.not_before for i in self._retry) - time.monotonic())
            try:
                item = self._queue.get(timeout=wait) if wait is not None else self._queue.get()
            except queue.Empty:
                item = None
                due = [i for i in self._retry if i.not_before <= time.monotonic()]
                self._retry = [i for i in self._retry if i not in due]
                for i in due:
                    self._attempt(i)
            else:
                if item is None:
                    self._stopping = True
                else:
                    self._attempt(item)

    def _attempt(self, item: _Item) -> None:
        item.attempts += 1
        turn_id = item.turn.get("turn_id")
        try:
            self._post(item)
        except urllib.error.HTTPError as exc:
            transient = exc.code >= 500 or exc.code in (408, 429)
            self._failed(item, f"HTTP {exc.code}", transient)
        except (urllib.error.URLError, OSError, TimeoutError) as exc:
            self._failed(item, f"{type(exc).__name__}: {getattr(exc, 'reason', exc)}", True)
        else:
            self.stats.saved += 1
            self._settled()
            log.info("turn %s saved to the gateway (session %s)", turn_id, item.session_id)

    def _failed(self, item: _Item, why: str, transient: bool) -> None:
        if transient and item.attempts < self.attempts:
            self.stats.retries += 1
            item.not_before = time.monotonic() + min(self.max_backoff_s, self.backoff_s * 2 ** (item.attempts - 1))
            self._retry.append(item)
            log.warning("saving turn %s failed (%s); retry %d of %d", item.turn.get("turn_id"), why,
                        item.attempts, self.attempts - 1)
            return
        self.stats.failed += 1
        self._settled()
        log.error("saving turn %s for session %s failed for good: %s", item.turn.get("turn_id"),
                  item.session_id, why)

    def _post(self, item: _Item) -> None:
        data = json.dumps(item.turn).encode()
        headers = {"Content-Type": "application/json"}
        token = self._token() if callable(self._token) else self._token
        if token:
            headers["Authorization"] = f"Bearer {token}"
        request = urllib.request.Request(self.url(item.session_id), data=data, headers=headers, method="POST")
        with _DIRECT.open(request, timeout=self.timeout_s) as response:
            response.read()
