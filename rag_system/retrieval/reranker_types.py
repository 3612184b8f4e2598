"""The rerank stage's interface and vocabulary: what the two implementations (cross_encoder.py,
llm_scorer.py) and the loader that picks between them (rerank.py) share, so neither imports the other."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Protocol, runtime_checkable

KIND_NONE = "none"
KIND_CROSS_ENCODER = "cross-encoder"
KIND_LLM = "llm-yes-no"


class RerankerLoadError(RuntimeError):
    """The configured reranker model cannot be found or loaded."""


@runtime_checkable
class Reranker(Protocol):
    """Scores passages for one query; higher is more relevant, range 0..1."""

    name: str

    def score(self, query: str, texts: list[str]) -> list[float]: ...


@dataclass(frozen=True)
class RerankerStatus:
    """What `/health` reports about the rerank stage."""

    configured: str  # the RERANKER_MODEL value as given
    loaded: bool
    kind: str  # "none", "cross-encoder" or "llm-yes-no"
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)
