"""A scripted OpenAI-compatible model server on a loopback port, for tests that need a generative backend.

Why a server and not a stand-in object: the RAG API's `openai` backend is the real client here
(its request body, SSE parsing, usage accounting), and the server is an external product's wire
format (`GET /v1/models`, `POST /v1/chat/completions` streamed as SSE), so everything of ours
runs as it does against vLLM or a llama.cpp server. The reply is a function of the request's
messages, which the server records, so a test can check both what the model was asked (the
history it saw) and what the product did with the reply. It is no model: it never decides
anything a test asserts about answering quality.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = Callable[[list[dict[str, Any]]], str]
MODEL_ID = "scripted-model"


class ScriptedLLM:
    """`with ScriptedLLM(reply) as llm:` serves at `llm.url`; `llm.requests` holds every chat request body."""

    def __init__(self, reply: Reply | str, pace_s: float = 0.0) -> None:
        self.reply: Reply = (lambda _messages: reply) if isinstance(reply, str) else reply
        self.pace_s = pace_s  # seconds between streamed words: a model writing at a person's reading pace
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._server is not None, "not started"
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def rag_env(self) -> dict[str, str]:
        """RAG API settings that make `backend: openai` talk to this server."""
        return {"OPENAI_BASE_URL": self.url, "OPENAI_MODEL": MODEL_ID}

    def start(self) -> ScriptedLLM:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                return

            def do_GET(self) -> None:  # noqa: N802
                if self.path.rstrip("/") == "/v1/models":
                    self._send(200, {"object": "list", "data": [{"id": MODEL_ID, "object": "model"}]})
                else:
                    self._send(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                if self.path.rstrip("/") != "/v1/chat/completions":
                    self._send(404, {"error": {"message": "not found"}})
                    return
                with owner._lock:
                    owner.requests.append(body)
                text = owner.reply(list(body.get("messages") or []))
                if body.get("stream"):
                    self._stream(text)
                else:
                    self._send(200, {"id": "chatcmpl-scripted", "object": "chat.completion", "model": MODEL_ID,
                                     "choices": [{"index": 0, "finish_reason": "stop",
                                                  "message": {"role": "assistant", "content": text}}],
                                     "usage": {"prompt_tokens": 10, "completion_tokens": len(text.split())}})

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, text: str) -> None:
                try:
                    self._stream_words(text)
                except (BrokenPipeError, ConnectionResetError):  # the client stopped reading: so do we
                    self.close_connection = True

            def _stream_words(self, text: str) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                words = text.split(" ")
                for i, word in enumerate(words):
                    piece = word if i == len(words) - 1 else word + " "
                    chunk = {"choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]}
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                    if owner.pace_s:
                        self.wfile.flush()
                        time.sleep(owner.pace_s)
                end = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                       "usage": {"prompt_tokens": 10, "completion_tokens": len(words)}}
                self.wfile.write(f"data: {json.dumps(end)}\n\ndata: [DONE]\n\n".encode())
                self.wfile.flush()
                self.close_connection = True

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, name="scripted-llm", daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> ScriptedLLM:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
