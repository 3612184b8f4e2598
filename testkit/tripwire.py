"""A loopback TCP relay in front of the model server that can kill it the moment its first token passes.

Why: the RAG API shows a person only sentences it has checked, so nothing reaches
the client while the model is inside its first sentence. A test that waits for a
token on the client's stream before killing the server therefore kills a server
that has already finished. The relay sees the model's own stream, so "killed
mid-answer" means what it says: the RAG API has read the first real token of a
streamed completion and then the socket dies with no `[DONE]`.
"""

from __future__ import annotations

import re
import socket
import threading
from collections.abc import Callable

from testkit.processes import free_port

#: The first chunk of a streamed completion that carries text (not the role-only opening delta).
FIRST_TOKEN = re.compile(rb'"content"\s*:\s*"[^"]')


class Tripwire:
    """Relays 127.0.0.1:`port` to `upstream_port`; once `arm()`ed, calls `trip` after the first token passes."""

    def __init__(self, upstream_port: int, trip: Callable[[], None]) -> None:
        self.port = free_port()
        self.upstream_port = upstream_port
        self._trip = trip
        self._armed = threading.Event()
        self.tripped = threading.Event()
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", self.port))
        self._thread = threading.Thread(target=self._accept, name="tripwire", daemon=True)

    def start(self) -> Tripwire:
        self._thread.start()
        return self

    def arm(self) -> None:
        self._armed.set()

    def close(self) -> None:
        self._listener.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:  # closed
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        try:
            upstream = socket.create_connection(("127.0.0.1", self.upstream_port), timeout=600)
        except OSError:
            client.close()  # the server is gone: the caller sees a dropped connection
            return
        threading.Thread(target=_pump, args=(client, upstream, None), daemon=True).start()
        _pump(upstream, client, self._watch)

    def _watch(self, chunk: bytes) -> bool:
        """True when this chunk should be the last one through: the armed wire saw a token."""
        if not self._armed.is_set() or not FIRST_TOKEN.search(chunk):
            return False
        with self._lock:
            if self.tripped.is_set():
                return True
            self.tripped.set()
        self._trip()
        return True


def _pump(src: socket.socket, dst: socket.socket, watch: Callable[[bytes], bool] | None) -> None:
    try:
        while chunk := src.recv(65536):
            dst.sendall(chunk)
            if watch is not None and watch(chunk):
                break
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()
