"""Saving turns to the gateway: retries with backoff on transient failures, never on client errors."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from rag_system.api.gateway_client import TurnSaver


def flaky_gateway(statuses: list[int]):  # type: ignore[no-untyped-def]
    seen: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
            status = statuses.pop(0) if statuses else 200
            self.send_response(status)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, seen


def test_transient_failures_are_retried_until_saved():
    server, seen = flaky_gateway([503, 500])
    saver = TurnSaver(f"http://127.0.0.1:{server.server_address[1]}", "tok", backoff_s=0.05)
    saver.start()
    try:
        saver.submit("s/1", {"turn_id": "t1", "answer": "x"})
        assert saver.wait_idle(10)
    finally:
        saver.stop()
        server.shutdown()
    assert len(seen) == 3 and seen[-1]["body"]["turn_id"] == "t1"
    assert seen[0]["path"] == "/sessions/s%2F1/messages/save" and seen[0]["auth"] == "Bearer tok"
    assert saver.stats.saved == 1 and saver.stats.retries == 2 and saver.stats.failed == 0


def test_client_errors_are_not_retried_and_unreachable_gateway_gives_up():
    server, seen = flaky_gateway([400])
    saver = TurnSaver(f"http://127.0.0.1:{server.server_address[1]}", backoff_s=0.05)
    saver.start()
    try:
        saver.submit("s1", {"turn_id": "t2"})
        assert saver.wait_idle(10)
    finally:
        saver.stop()
        server.shutdown()
    assert len(seen) == 1 and seen[0]["auth"] is None and saver.stats.failed == 1

    dead = TurnSaver("http://127.0.0.1:9", attempts=3, backoff_s=0.05)
    dead.start()
    dead.submit("s1", {"turn_id": "t3"})
    assert dead.wait_idle(10)
    dead.stop()
    assert dead.stats.failed == 1 and dead.stats.retries == 2
