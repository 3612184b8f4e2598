"""Server-sent events over a plain HTTP response (Documentation/api.md).

Frames are `data: {"type": ..., "data": {...}}\\n\\n`. One keeper thread per
stream sends a `: heartbeat` comment when the stream has been idle for the
heartbeat interval (proxies and browsers drop silent connections) and
watches the socket: when the client goes away (EOF, reset, or a failed
write) it sets the stream's `cancel` event, which the pipeline checks, so
the work for that request stops.
"""

from __future__ import annotations

import json
import logging
import select
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any, Protocol

log = logging.getLogger(__name__)

POLL_S = 0.25


def frame(event: str, data: Any) -> bytes:
    payload = json.dumps({"type": event, "data": data}, ensure_ascii=False, separators=(",", ":"))
    return f"data: {payload}\n\n".encode()


def read_frames(resp: Any) -> Iterator[tuple[str, dict[str, Any]]]:
    """`(type, data)` of each `data: {"type", "data"}` frame of a stream read line by line (comments skipped)."""
    lines: list[str] = []
    for raw in resp:
        line = raw.decode("utf-8").rstrip("\r\n")
        if line:
            lines.append(line)
            continue
        data = "\n".join(x[5:].lstrip() for x in lines if x.startswith("data:"))
        lines = []
        if not data:
            continue
        parsed = json.loads(data)
        if isinstance(parsed, dict) and "type" in parsed:
            yield str(parsed["type"]), parsed.get("data") or {}


def client_gone(sock: socket.socket | None) -> bool:
    """True when the peer closed or reset the connection (a readable socket with no data)."""
    if sock is None:
        return False
    try:
        readable, _, _ = select.select([sock], [], [], 0)
        if not readable:
            return False
        return sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except BlockingIOError:
        return False
    except (OSError, ValueError):
        return True


class Writable(Protocol):
    """The connection's `wfile` (unbuffered: each frame leaves when written and flushed)."""

    def write(self, data: bytes, /) -> object: ...

    def flush(self) -> object: ...


class SSEStream:
    """Thread-safe writer of one event stream; `cancel` is set once the client is gone."""

    def __init__(self, wfile: Writable, sock: socket.socket | None, heartbeat_s: float = 15.0) -> None:
        self.wfile = wfile
        self.sock = sock
        self.heartbeat_s = heartbeat_s
        self.cancel = threading.Event()
        self.closed = threading.Event()
        self._lock = threading.Lock()
        self._last_write = time.monotonic()
        self._keeper = threading.Thread(target=self._keep, name="docent-sse-keeper", daemon=True)

    def start(self) -> SSEStream:
        self._keeper.start()
        return self

    def send(self, event: str, data: Any) -> bool:
        """Write one frame; False (and `cancel` set) when the client is gone."""
        return self._write(frame(event, data))

    def _write(self, chunk: bytes) -> bool:
        if self.cancel.is_set():
            return False
        with self._lock:
            try:
                self.wfile.write(chunk)
                self.wfile.flush()
            except (OSError, ValueError):
                self.cancel.set()
                return False
            self._last_write = time.monotonic()
        return True

    def _keep(self) -> None:
        while not self.closed.wait(POLL_S):
            if client_gone(self.sock):
                log.debug("SSE client disconnected")
                self.cancel.set()
                return
            if time.monotonic() - self._last_write >= self.heartbeat_s:
                if not self._write(b": heartbeat\n\n"):
                    return

    def close(self) -> None:
        self.closed.set()
        if self._keeper.is_alive() and self._keeper is not threading.current_thread():
            self._keeper.join(timeout=2 * POLL_S + 1)
