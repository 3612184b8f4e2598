"""The one interface every LLM backend implements, and its typed results.

Why a small abstract base rather than each backend's own client: the answering
loop (synthesis, repair, fall-through to the next backend) must not care
whether tokens come from an embedded GGUF, Ollama or an OpenAI-compatible
server. Everything a backend needs per request arrives as arguments; a backend
object holds only shared, read-only state (a loaded model, a base URL).
"""

from __future__ import annotations

import abc
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any


class LLMError(RuntimeError):
    """Base class of backend failures."""


class BackendUnavailableError(LLMError):
    """The backend cannot be used at all (no model file, server unreachable)."""


class GenerationFailedError(LLMError):
    """The backend was reachable but failed while answering."""


class ContextOverflowError(LLMError):
    """The prompt plus the answer budget does not fit the model's window.

    Raised instead of letting the backend silently drop the start of the prompt.
    """


@dataclass(frozen=True)
class Message:
    role: str  # "system" | "user" | "assistant"
    content: str

    def to_json(self) -> dict[str, str]:
        return {"role": self.role, "content": self.content}


@dataclass(frozen=True)
class GenerationParams:
    max_tokens: int = 512
    temperature: float = 0.0
    stop: tuple[str, ...] = ()
    model: str | None = None  # per-request model name (ollama/openai); None = backend default


@dataclass
class Completion:
    text: str
    prompt_tokens: int
    completion_tokens: int
    model: str = ""


@dataclass
class BackendStatus:
    name: str
    available: bool
    model: str = ""
    detail: str = ""
    context_window: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "available": self.available, "model": self.model,
                "detail": self.detail, "context_window": self.context_window}


@dataclass
class StreamResult:
    """Filled in by `LLMBackend.stream` once the iterator is exhausted."""

    completion: Completion | None = None
    chunks: list[str] = field(default_factory=list)


class LLMBackend(abc.ABC):
    """complete, stream and count tokens; see module docstring for why."""

    name: str = "abstract"
    generative: bool = True  # False only for the extractive backend

    @abc.abstractmethod
    def status(self) -> BackendStatus:
        """Cheap availability check; never loads a multi-GB model twice."""

    @abc.abstractmethod
    def context_window(self, model: str | None = None) -> int:
        """Total tokens (prompt + answer) the model accepts."""

    @abc.abstractmethod
    def count_tokens(self, text: str, model: str | None = None) -> int:
        """Tokens of `text` for this backend's model (an estimate where no tokenizer exists)."""

    @abc.abstractmethod
    def stream(self, messages: list[Message], params: GenerationParams,
               result: StreamResult) -> Generator[str, None, None]:
        """Yield text pieces; set `result.completion` when done."""

    def prompt_rate(self) -> float | None:
        """Prompt tokens read per second, when measured (see `warm`); None when unknown."""
        return None

    def warm(self, messages: list[Message]) -> None:
        """Read a representative prompt once at start-up (cache its prefix, measure the rate); optional."""
        return None

    def complete(self, messages: list[Message], params: GenerationParams) -> Completion:
        result = StreamResult()
        for _ in self.stream(messages, params, result):
            pass
        if result.completion is None:  # a backend bug, not a user error
            raise GenerationFailedError(f"{self.name} finished without a completion")
        return result.completion

    def prompt_tokens(self, messages: list[Message], model: str | None = None) -> int:
        """Tokens of a chat prompt: content plus a per-message allowance for the template."""
        return sum(self.count_tokens(m.content, model) + 8 for m in messages) + 8

    def check_fits(self, messages: list[Message], params: GenerationParams) -> int:
        """Raise `ContextOverflowError` unless prompt + answer fit; return the prompt size."""
        prompt = self.prompt_tokens(messages, params.model)
        window = self.context_window(params.model)
        if prompt + params.max_tokens > window:
            raise ContextOverflowError(
                f"prompt of {prompt} tokens plus {params.max_tokens} answer tokens exceeds "
                f"the {window}-token window of {self.name}")
        return prompt


def estimate_tokens(text: str) -> int:
    """A tokenizer-free upper-ish estimate (~3.5 characters per token) for HTTP backends."""
    return max(1, (len(text) * 2 + 6) // 7) if text else 0
