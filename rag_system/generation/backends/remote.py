"""HTTP backends: Ollama (`OLLAMA_HOST`) and any OpenAI-compatible server.

These are the scale-out path: generation moves to a bigger machine (vLLM,
llama.cpp server, LM Studio, Ollama) while retrieval stays here. Standard
library `urllib` only; token counts come from the server's usage report when
it sends one and from a character estimate otherwise.
"""

from __future__ import annotations

import http.client
import json
import urllib.error
import urllib.request
from collections.abc import Generator, Iterable
from typing import Any

from rag_system.generation.llm import (
    BackendStatus,
    BackendUnavailableError,
    Completion,
    GenerationFailedError,
    GenerationParams,
    LLMBackend,
    Message,
    StreamResult,
    estimate_tokens,
)


def _request(url: str, body: dict[str, Any] | None, timeout: float,
             headers: dict[str, str] | None = None) -> Any:
    data = None if body is None else json.dumps(body).encode("utf-8")
    req = urllib.request.Request(url, data=data, method="GET" if body is None else "POST",
                                 headers={"Content-Type": "application/json", **(headers or {})})
    return urllib.request.urlopen(req, timeout=timeout)  # noqa: S310 - URL comes from settings


def read_ollama_stream(lines: Iterable[bytes], result: StreamResult) -> Generator[str, None, dict[str, Any]]:
    """Yield the text of Ollama's NDJSON chat stream and return its final (`done`) message.

    A function of lines, not of a socket, so that the rule "a stream that ends
    without `done: true` is a failure, never a short answer" is tested on bytes
    (tests/unit/test_remote_streams.py): no Ollama server runs in the test suite.
    """
    try:
        for line in lines:
            if not line.strip():
                continue
            event = json.loads(line)
            if event.get("error"):
                raise GenerationFailedError(f"ollama: {event['error']}")
            text = event.get("message", {}).get("content", "")
            if text:
                result.chunks.append(text)
                yield text
            if event.get("done"):
                return dict(event)
    except (OSError, ValueError, http.client.HTTPException) as exc:
        raise GenerationFailedError(f"ollama stream broke: {exc!r}") from exc
    # The server died mid-answer: what arrived is a truncated answer, not an answer.
    raise GenerationFailedError("ollama stream ended before its final (done) message")


class _HttpBackend(LLMBackend):
    """What both HTTP backends share: a configured window and tokenizer-free token estimates."""

    context_tokens: int

    def context_window(self, model: str | None = None) -> int:
        return self.context_tokens

    def count_tokens(self, text: str, model: str | None = None) -> int:
        return estimate_tokens(text)


class OllamaBackend(_HttpBackend):
    name = "ollama"

    def __init__(self, host: str, model: str, *, timeout: float = 120.0, context_tokens: int = 8192,
                 probe_timeout: float = 1.0) -> None:
        self.host = host.rstrip("/")
        self.model = model
        self.timeout = timeout
        self.context_tokens = context_tokens
        self.probe_timeout = probe_timeout

    def status(self) -> BackendStatus:
        try:
            with _request(f"{self.host}/api/tags", None, self.probe_timeout) as resp:
                tags = json.load(resp)
        except (OSError, ValueError) as exc:
            return BackendStatus(self.name, False, self.model, f"{self.host} unreachable: {exc}")
        names = {m.get("name", "") for m in tags.get("models", [])}
        if self.model not in names and f"{self.model}:latest" not in names:
            return BackendStatus(self.name, False, self.model,
                                 f"model {self.model} is not pulled on {self.host} (ollama pull {self.model})")
        return BackendStatus(self.name, True, self.model, self.host, self.context_tokens)

    def stream(self, messages: list[Message], params: GenerationParams,
               result: StreamResult) -> Generator[str, None, None]:
        prompt = self.check_fits(messages, params)
        model = params.model or self.model
        body = {"model": model, "messages": [m.to_json() for m in messages], "stream": True,
                "options": {"temperature": params.temperature, "num_predict": params.max_tokens,
                            "num_ctx": self.context_tokens, "seed": 0, "stop": list(params.stop) or None}}
        try:
            resp = _request(f"{self.host}/api/chat", body, self.timeout)
        except urllib.error.HTTPError as exc:
            raise GenerationFailedError(f"ollama returned {exc.code}: {exc.read()[:200]!r}") from exc
        except OSError as exc:
            raise BackendUnavailableError(f"ollama at {self.host} unreachable: {exc}") from exc
        with resp:
            final = yield from read_ollama_stream(resp, result)
        answer = "".join(result.chunks)
        result.completion = Completion(
            answer, int(final.get("prompt_eval_count") or prompt),
            int(final.get("eval_count") or estimate_tokens(answer)), model)


class OpenAIBackend(_HttpBackend):
    name = "openai"

    def __init__(self, base_url: str, api_key: str, model: str, *, timeout: float = 120.0,
                 context_tokens: int = 8192, probe_timeout: float = 2.0) -> None:
        base = base_url.rstrip("/")
        self.base_url = base if base.endswith("/v1") else f"{base}/v1"
        self.api_key = api_key
        self.model = model
        self.timeout = timeout
        self.context_tokens = context_tokens
        self.probe_timeout = probe_timeout

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}

    def status(self) -> BackendStatus:
        try:
            with _request(f"{self.base_url}/models", None, self.probe_timeout, self._headers()) as resp:
                listed = json.load(resp)
        except (OSError, ValueError) as exc:
            return BackendStatus(self.name, False, self.model, f"{self.base_url} unreachable: {exc}")
        ids = [m.get("id", "") for m in listed.get("data", [])]
        model = self.model or (ids[0] if ids else "")
        if not model:
            return BackendStatus(self.name, False, "", f"{self.base_url} serves no model; set OPENAI_MODEL")
        return BackendStatus(self.name, True, model, self.base_url, self.context_tokens)

    def stream(self, messages: list[Message], params: GenerationParams,
               result: StreamResult) -> Generator[str, None, None]:
        prompt = self.check_fits(messages, params)
        model = params.model or self.model or self.status().model
        body = {"model": model, "messages": [m.to_json() for m in messages], "stream": True,
                "temperature": params.temperature, "max_tokens": params.max_tokens, "seed": 0,
                "stream_options": {"include_usage": True}}
        if params.stop:
            body["stop"] = list(params.stop)
        try:
            resp = _request(f"{self.base_url}/chat/completions", body, self.timeout, self._headers())
        except urllib.error.HTTPError as exc:
            raise GenerationFailedError(f"openai endpoint returned {exc.code}: {exc.read()[:200]!r}") from exc
        except OSError as exc:
            raise BackendUnavailableError(f"openai endpoint {self.base_url} unreachable: {exc}") from exc
        usage: dict[str, Any] = {}
        ended = False  # [DONE] or a finish_reason arrived: the answer is whole
        with resp:
            try:
                for raw in resp:
                    line = raw.decode("utf-8").strip()
                    if not line.startswith("data:"):
                        continue
                    data = line[5:].strip()
                    if data == "[DONE]":
                        ended = True
                        break
                    event = json.loads(data)
                    usage = event.get("usage") or usage
                    for choice in event.get("choices", []):
                        text = (choice.get("delta") or {}).get("content") or ""
                        ended = ended or choice.get("finish_reason") is not None
                        if text:
                            result.chunks.append(text)
                            yield text
            except (OSError, ValueError, http.client.HTTPException) as exc:
                raise GenerationFailedError(f"openai stream broke: {exc!r}") from exc
        if not ended:  # the server died mid-answer: what arrived is a truncated answer, not an answer
            raise GenerationFailedError("openai stream ended before [DONE] or a finish_reason")
        answer = "".join(result.chunks)
        result.completion = Completion(answer, int(usage.get("prompt_tokens") or prompt),
                                       int(usage.get("completion_tokens") or estimate_tokens(answer)), model)
