"""Ollama and OpenAI-compatible backends over real HTTP, and `auto` selection.

The servers here stand in for Ollama and an OpenAI-compatible endpoint (external
products, not ours): they speak the documented wire formats (NDJSON chat stream,
SSE chat completions), so our clients' parsing, usage accounting, failure
handling and fall-through are exercised over real sockets.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from rag_system.config import load_settings
from rag_system.generation.backends.remote import OllamaBackend, OpenAIBackend
from rag_system.generation.llm import BackendUnavailableError, GenerationFailedError, GenerationParams, Message
from rag_system.generation.registry import BackendRegistry

WORDS = ["A ", "default ", "value ", "of ", "3 ", "is ", "assumed ", "[1]."]


class FakeLLMServer(ThreadingHTTPServer):
    break_after: int | None = None
    requests: list[dict]


class Handler(BaseHTTPRequestHandler):
    server: FakeLLMServer

    def log_message(self, *args) -> None:  # keep test output clean
        return

    def _json(self, payload: dict) -> None:
        body = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        if self.path == "/api/tags":
            self._json({"models": [{"name": "qwen3:8b"}]})
        elif self.path == "/v1/models":
            self._json({"data": [{"id": "served-model"}]})
        else:
            self.send_error(404)

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
        self.send_response(200)
        self.end_headers()
        for i, word in enumerate(WORDS):
            if self.server.break_after is not None and i >= self.server.break_after:
                self.wfile.write(b"{not json\n" if self.path == "/api/chat" else b"data: {broken\n\n")
                return
            if self.path == "/api/chat":
                line = {"message": {"content": word}, "done": False}
                self.wfile.write((json.dumps(line) + "\n").encode())
            else:
                event = {"choices": [{"delta": {"content": word}, "finish_reason": None}]}
                self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
            self.wfile.flush()
        if self.path == "/api/chat":
            done = {"done": True, "prompt_eval_count": 42, "eval_count": len(WORDS), "done_reason": "stop"}
            self.wfile.write((json.dumps(done) + "\n").encode())
        else:
            usage = {"choices": [], "usage": {"prompt_tokens": 40, "completion_tokens": 8}}
            self.wfile.write(f"data: {json.dumps(usage)}\n\ndata: [DONE]\n\n".encode())


@pytest.fixture()
def server() -> Iterator[FakeLLMServer]:
    srv = FakeLLMServer(("127.0.0.1", 0), Handler)
    srv.requests = []
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def url(srv: FakeLLMServer) -> str:
    return f"http://127.0.0.1:{srv.server_address[1]}"


MESSAGES = [Message("system", "rules"), Message("user", "question")]


def test_ollama_streams_and_reports_usage(server: FakeLLMServer):
    backend = OllamaBackend(url(server), "qwen3:8b")
    assert backend.status().available
    done = backend.complete(MESSAGES, GenerationParams(max_tokens=64, model="llama3:8b"))
    assert done.text == "".join(WORDS) and done.prompt_tokens == 42 and done.completion_tokens == 8
    sent = server.requests[0]["body"]
    assert sent["model"] == "llama3:8b" and sent["options"]["temperature"] == 0.0 and sent["stream"] is True


def test_ollama_without_the_model_is_unavailable(server: FakeLLMServer):
    status = OllamaBackend(url(server), "mistral:7b").status()
    assert not status.available and "ollama pull mistral:7b" in status.detail


def test_openai_compatible_streams_with_bearer_token(server: FakeLLMServer):
    backend = OpenAIBackend(url(server), "sk-test", "")
    status = backend.status()
    assert status.available and status.model == "served-model"
    done = backend.complete(MESSAGES, GenerationParams(max_tokens=64))
    assert done.text == "".join(WORDS) and done.prompt_tokens == 40 and done.model == "served-model"
    assert server.requests[0]["auth"] == "Bearer sk-test" and server.requests[0]["path"] == "/v1/chat/completions"


@pytest.mark.parametrize("make", [lambda u: OllamaBackend(u, "qwen3:8b"), lambda u: OpenAIBackend(u, "", "m")])
def test_a_stream_that_breaks_mid_answer_is_a_generation_failure(server: FakeLLMServer, make):
    server.break_after = 3
    with pytest.raises(GenerationFailedError):
        make(url(server)).complete(MESSAGES, GenerationParams(max_tokens=64))


def test_unreachable_server_is_unavailable():
    backend = OllamaBackend("http://127.0.0.1:9", "qwen3:8b")
    assert not backend.status().available
    with pytest.raises(BackendUnavailableError):
        backend.complete(MESSAGES, GenerationParams())


def test_auto_prefers_a_reachable_ollama_then_falls_through_in_order(server: FakeLLMServer, tmp_path):
    settings = load_settings(environ={"DOCENT_DATA_DIR": str(tmp_path), "OLLAMA_HOST": url(server),
                                      "OPENAI_BASE_URL": url(server)}, dotenv_path=None)
    names = [b.name for b in BackendRegistry(settings).chain()]
    assert names[:2] == ["ollama", "openai"] and names[-1] == "extractive"
    down = settings.with_overrides(ollama_host="http://127.0.0.1:9", openai_base_url="")
    registry = BackendRegistry(down)
    chain = [b.name for b in registry.chain()]
    assert "ollama" not in chain and "openai" not in chain and chain[-1] == "extractive"
    assert registry.chosen().name == chain[0]
    assert [b.name for b in registry.chain("openai")] == ["openai", "extractive"]
