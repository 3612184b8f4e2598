"""Helpers for the RAG API integration tests: a real server on a free loopback port,
a stand-in for the gateway's save and history endpoints, and a small HTTP/SSE client.

The server runs in-process (same real components as `python -m rag_system api`)
so the packaged embedder loaded once per test session is shared.
"""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from testkit.client import read_events
from testkit.docs import ANSWER_DOCS as DOCS
from testkit.docs import ANSWER_QUESTION as QUESTION  # noqa: F401 (the tests import it from here)

SAVE_KEYS = {"turn_id", "question", "answer", "answer_source", "citations", "warnings", "source_documents", "steps",
             "token_usage", "timings_ms", "status", "error", "indexes", "options"}


# -- the gateway's save endpoint, captured -------------------------------------------
@dataclass
class SavedTurns:
    turns: list[dict[str, Any]] = field(default_factory=list)
    cond: threading.Condition = field(default_factory=threading.Condition)

    def wait_for(self, turn_id: str, timeout: float = 30.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                hits = [t for t in self.turns if t["body"].get("turn_id") == turn_id]
                if hits:
                    return hits[-1]
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"turn {turn_id} was never saved; saw {len(self.turns)} turns")
                self.cond.wait(left)


    def history(self, session_id: str) -> list[dict[str, Any]]:
        """What the gateway's `GET /sessions/<id>/history` answers: the saved turns, oldest first."""
        with self.cond:
            turns = [t["body"] for t in self.turns if t["path"] == f"/sessions/{session_id}/messages/save"]
        return [m for t in turns for m in ({"role": "user", "content": t["question"], "turn_id": t["turn_id"]},
                                           {"role": "assistant", "content": t["answer"], "turn_id": t["turn_id"]})]


@contextmanager
def fake_gateway() -> Iterator[tuple[str, SavedTurns]]:
    saved = SavedTurns()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            session = self.path.split("?")[0].removeprefix("/sessions/").removesuffix("/history")
            out = json.dumps({"session_id": session, "history": saved.history(session)}).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

        def do_POST(self) -> None:  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            with saved.cond:
                saved.turns.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
                saved.cond.notify_all()
            out = b'{"ok": true}'
            self.send_response(200)
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", saved
    finally:
        server.shutdown()
        server.server_close()


# -- the RAG API ----------------------------------------------------------------------
@dataclass
class Api:
    host: str
    port: int
    data_dir: Path
    service: Any
    token: str = ""

    @property
    def uploads(self) -> Path:
        return self.data_dir / "uploads"

    def call(self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None,
             raw: bytes | None = None, auth: bool = True) -> tuple[int, dict[str, str], Any]:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=120)
        hdrs = dict(headers or {})
        if self.token and auth:
            hdrs.setdefault("Authorization", f"Bearer {self.token}")
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        if data is not None:
            hdrs.setdefault("Content-Type", "application/json")
        conn.request(method, path, body=data, headers=hdrs)
        resp = conn.getresponse()
        text = resp.read()
        conn.close()
        ctype = resp.getheader("Content-Type", "")
        parsed: Any = json.loads(text) if text and ctype.startswith("application/json") else text.decode()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, parsed

    def open_stream(self, path: str, body: Any = None, method: str = "POST") -> tuple[http.client.HTTPConnection,
                                                                                   http.client.HTTPResponse]:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=300)
        hdrs = {"Content-Type": "application/json", "Accept": "text/event-stream"}
        if self.token:
            hdrs["Authorization"] = f"Bearer {self.token}"
        conn.request(method, path, body=None if body is None else json.dumps(body).encode(), headers=hdrs)
        return conn, conn.getresponse()

    def open_raw(self, path: str, body: Any) -> tuple[socket.socket, Any]:
        """A POST on a bare socket (so a test can drop the connection): (socket, reader past the headers)."""
        data = json.dumps(body).encode()
        sock = socket.create_connection((self.host, self.port), timeout=300)
        auth = f"Authorization: Bearer {self.token}\r\n" if self.token else ""
        sock.sendall(f"POST {path} HTTP/1.1\r\nHost: {self.host}\r\nContent-Type: application/json\r\n"
                     f"{auth}Content-Length: {len(data)}\r\n\r\n".encode() + data)
        reader = sock.makefile("rb")
        status = reader.readline()
        assert b" 200 " in status, status
        while reader.readline() not in (b"\r\n", b"\n", b""):
            pass
        return sock, reader

    def stream(self, path: str, body: Any = None, method: str = "POST") -> list[tuple[str, Any]]:
        conn, resp = self.open_stream(path, body, method)
        assert resp.status == 200, resp.read()
        assert resp.getheader("Content-Type", "").startswith("text/event-stream")
        try:
            return list(read_events(resp))
        finally:
            conn.close()


def api_settings(data_dir: Path, **env: str):  # type: ignore[no-untyped-def]
    from rag_system.config import load_settings

    base = {"DOCENT_DATA_DIR": str(data_dir), "OLLAMA_HOST": "http://127.0.0.1:9", "LLM_PRELOAD": "false",
            "SEMANTIC_CACHE": "false"}
    base.update(env)
    return load_settings(environ=base, dotenv_path=None)


@contextmanager
def running_api(settings, embedder, token: str = "") -> Iterator[Api]:  # type: ignore[no-untyped-def]
    from rag_system.api.app import Service
    from rag_system.api.server import serve

    service = Service(settings, embedder=embedder)
    server = serve(service, "127.0.0.1", 0)
    server.serve_in_thread()
    try:
        yield Api("127.0.0.1", server.server_address[1], Path(settings.data_dir), service, token)
    finally:
        server.shutdown()
        server.server_close()
        service.close()


def write_docs(folder: Path, docs: dict[str, str] = DOCS) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in docs.items():
        (folder / name).write_text(text)
    return folder


def build(api: Api, index: str, paths: list[str]) -> tuple[dict[str, Any], list[tuple[str, Any]]]:
    """Start a job over HTTP and follow its event stream to the end."""
    status, headers, body = api.call("POST", "/index", {"index": index, "paths": paths})
    assert status == 202, body
    events = api.stream(f"/index/jobs/{body['job_id']}/events", method="GET")
    status, _, job = api.call("GET", f"/index/jobs/{body['job_id']}")
    assert status == 200
    return job, events
