"""Embedded generation through `llama-cpp-python` over any GGUF file.

The model loads once per process on first use (never at import) and is shared
by every request; llama.cpp contexts are not thread-safe, so generations take
turns behind a lock while retrieval for other requests runs concurrently.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Generator
from pathlib import Path
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
)
from rag_system.generation.models import ModelIntegrityError, ModelNotFoundError, resolve_gguf

log = logging.getLogger(__name__)


class LlamaCppBackend(LLMBackend):
    name = "llamacpp"

    def __init__(self, gguf_setting: str = "", *, context_tokens: int = 8192, threads: int = 0,
                 gpu_layers: int = -1, models_dir: Path | None = None, flash_attention: bool = True) -> None:
        """`flash_attention`: llama.cpp's fused attention, which reads a prompt faster on the CPU too (the
        prompt is most of the wait before the first checked sentence); greedy answers are unchanged."""
        self.gguf_setting = gguf_setting
        self.flash_attention = flash_attention
        self.context_tokens = context_tokens
        self.threads = threads or max(1, os.cpu_count() or 1)
        self.gpu_layers = gpu_layers
        self.models_dir = models_dir
        self._llm: Any = None
        self._path: Path | None = None
        self._error: str | None = None
        self._rate: float | None = None  # prompt tokens/s, measured once by `warm`
        self._load_lock = threading.Lock()
        self._run_lock = threading.Lock()

    # -- loading -----------------------------------------------------------
    def model_path(self) -> Path:
        if self._path is None:
            self._path = resolve_gguf(self.gguf_setting, self.models_dir)
        return self._path

    def _model(self) -> Any:
        with self._load_lock:
            if self._llm is not None:
                return self._llm
            if self._error is not None:
                raise BackendUnavailableError(self._error)
            try:
                from llama_cpp import Llama, llama_supports_gpu_offload

                path = self.model_path()
                # A CUDA (or Metal, Vulkan) build offloads layers; the CPU build this project compiles
                # by default has no device, and asking it to offload would only log a warning.
                layers = self.gpu_layers if llama_supports_gpu_offload() else 0
                self._llm = Llama(model_path=str(path), n_ctx=self.context_tokens, n_threads=self.threads,
                                  n_batch=512, n_gpu_layers=layers, flash_attn=self.flash_attention, verbose=False)
            except (ImportError, ModelNotFoundError, ModelIntegrityError, ValueError, RuntimeError) as exc:
                self._error = f"cannot load GGUF ({self.gguf_setting or 'packaged default'}): {exc}"
                raise BackendUnavailableError(self._error) from exc
            log.info("llamacpp loaded %s (n_ctx=%d, threads=%d, gpu layers=%d, flash attention %s)", path.name,
                     self.context_tokens, self.threads, layers, "on" if self.flash_attention else "off")
            return self._llm

    def status(self) -> BackendStatus:
        try:
            path = self.model_path()
        except (ModelNotFoundError, ModelIntegrityError) as exc:
            return BackendStatus(self.name, False, detail=str(exc))
        try:
            import llama_cpp  # noqa: F401
        except ImportError as exc:
            return BackendStatus(self.name, False, model=path.name, detail=f"llama-cpp-python missing: {exc}")
        if self._error:
            return BackendStatus(self.name, False, model=path.name, detail=self._error)
        return BackendStatus(self.name, True, model=path.stem, context_window=self.context_tokens,
                             detail="loaded" if self._llm is not None else "loads on first answer")

    def load(self) -> None:
        """Load now (service start-up), so the first answer does not pay for it."""
        self._model()

    def warm(self, messages: list[Message]) -> None:
        """Read `messages` once: llama.cpp keeps the evaluated tokens, and a later prompt that starts
        with the same system prompt reuses them (its prefix is not read again); the time it took is
        the prompt rate that the "reading N passages (~S s)" estimate divides by."""
        prompt = self.prompt_tokens(messages)
        t0 = time.perf_counter()
        self.complete(messages, GenerationParams(max_tokens=1))
        elapsed = time.perf_counter() - t0
        if elapsed > 0:
            self._rate = prompt / elapsed
        log.info("llamacpp warm: %d prompt tokens in %.1f s (%.0f tokens/s)", prompt, elapsed, self._rate or 0)

    def prompt_rate(self) -> float | None:
        return self._rate

    # -- tokens ------------------------------------------------------------
    def context_window(self, model: str | None = None) -> int:
        return self.context_tokens

    def count_tokens(self, text: str, model: str | None = None) -> int:
        if not text:
            return 0
        return len(self._model().tokenize(text.encode("utf-8"), add_bos=False, special=True))

    # -- generation --------------------------------------------------------
    def stream(self, messages: list[Message], params: GenerationParams,
               result: StreamResult) -> Generator[str, None, None]:
        llm = self._model()
        prompt = self.check_fits(messages, params)
        with self._run_lock:
            try:
                pieces = llm.create_chat_completion(
                    messages=[m.to_json() for m in messages], temperature=params.temperature,
                    max_tokens=params.max_tokens, stop=list(params.stop) or None, stream=True,
                    seed=0)
                try:
                    for piece in pieces:
                        choice = piece["choices"][0]
                        text = choice.get("delta", {}).get("content") or ""
                        if text:
                            result.chunks.append(text)
                            yield text
                finally:
                    close = getattr(pieces, "close", None)
                    if close:
                        close()
            except (RuntimeError, ValueError) as exc:
                raise GenerationFailedError(f"llamacpp failed: {exc}") from exc
        answer = "".join(result.chunks)
        result.completion = Completion(answer, prompt, self.count_tokens(answer), self.model_path().stem)

    def prompt_tokens(self, messages: list[Message], model: str | None = None) -> int:
        # Qwen/ChatML template: "<|im_start|>role\n" ... "<|im_end|>\n" = ~5 tokens a message.
        return sum(self.count_tokens(m.content) + 5 for m in messages) + 3
