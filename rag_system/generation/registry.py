"""Which backend answers: construction from settings, `auto` selection, fall-through order.

One registry per process holds the backend objects (so the GGUF loads once)
and caches availability probes for a short time, because probing Ollama on
every question would add a network round trip to each answer.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Generator
from pathlib import Path

from common.errors import DomainError
from common.options import BACKENDS
from rag_system.config import Settings
from rag_system.generation.backends.llamacpp import LlamaCppBackend
from rag_system.generation.backends.remote import OllamaBackend, OpenAIBackend
from rag_system.generation.llm import (
    BackendStatus,
    GenerationFailedError,
    GenerationParams,
    LLMBackend,
    Message,
    StreamResult,
    estimate_tokens,
)


AUTO_ORDER = BACKENDS[1:]  # "auto" tries them in this order


class UnknownBackendError(DomainError, ValueError):
    """A request named a backend that does not exist."""

    status, code = 400, "invalid_option"


class ExtractiveBackend(LLMBackend):
    """No model: the synthesis loop builds the answer from evidence sentences."""

    name = "extractive"
    generative = False

    def status(self) -> BackendStatus:
        return BackendStatus(self.name, True, "none", "verbatim evidence sentences", 0)

    def context_window(self, model: str | None = None) -> int:
        return 1 << 30

    def count_tokens(self, text: str, model: str | None = None) -> int:
        return estimate_tokens(text)

    def stream(self, messages: list[Message], params: GenerationParams,
               result: StreamResult) -> Generator[str, None, None]:
        raise GenerationFailedError("the extractive backend does not generate text")


class BackendRegistry:
    def __init__(self, settings: Settings, probe_ttl_s: float = 30.0) -> None:
        self.settings = settings
        self.probe_ttl_s = probe_ttl_s
        self._backends: dict[str, LLMBackend] = {}
        self._probes: dict[str, tuple[float, BackendStatus]] = {}
        self._lock = threading.Lock()

    def backend(self, name: str) -> LLMBackend:
        if name not in AUTO_ORDER:
            raise UnknownBackendError(f"unknown LLM backend {name!r}; use one of auto, {', '.join(AUTO_ORDER)}")
        with self._lock:
            if name not in self._backends:
                self._backends[name] = self._build(name)
            return self._backends[name]

    def _build(self, name: str) -> LLMBackend:
        s = self.settings
        if name == "llamacpp":
            return LlamaCppBackend(s.llm_gguf, context_tokens=s.llm_context_tokens, threads=s.llm_threads, gpu_layers=s.llm_gpu_layers,
                                   models_dir=Path(s.models_dir).expanduser() if s.models_dir else None,
                                   flash_attention=s.llm_flash_attention)
        if name == "ollama":
            return OllamaBackend(s.ollama_host, s.ollama_model, timeout=s.llm_timeout_s,
                                 context_tokens=s.llm_context_tokens)
        if name == "openai":
            return OpenAIBackend(s.openai_base_url, s.openai_api_key, s.openai_model,
                                 timeout=s.llm_timeout_s, context_tokens=s.llm_context_tokens)
        return ExtractiveBackend()

    def status(self, name: str) -> BackendStatus:
        now = time.monotonic()
        with self._lock:
            cached = self._probes.get(name)
        if cached and now - cached[0] < self.probe_ttl_s:
            return cached[1]
        if name == "openai" and not self.settings.openai_base_url:
            status = BackendStatus(name, False, detail="OPENAI_BASE_URL is not set")
        else:
            status = self.backend(name).status()
        with self._lock:
            self._probes[name] = (now, status)
        return status

    def chain(self, requested: str | None = None) -> list[LLMBackend]:
        """Backends to try in order: the chosen one first, then the rest of the fall-through order."""
        name = requested or self.settings.llm_backend
        if name == "auto":
            names = [n for n in AUTO_ORDER if self.status(n).available]
        else:
            self.backend(name)  # raises UnknownBackendError
            names = [name] + ([] if name == "extractive" else ["extractive"])
        return [self.backend(n) for n in names]

    def chosen(self) -> BackendStatus:
        """What `auto` (or the configured backend) would use now; for /health."""
        return self.status(self.chain()[0].name)

    def statuses(self) -> list[BackendStatus]:
        return [self.status(n) for n in AUTO_ORDER]
