"""What every embedder shares: the `Embedder` protocol callers type against, its identity, its load error,
token counting from its own tokenizer, and remembered question vectors. Every embedder module imports this
one and none of the others."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from common.errors import DomainError

#: Texts of query-sized calls whose vectors are kept, most recent first.
QUERY_CACHE_SIZE = 512


class EmbedderLoadError(DomainError, RuntimeError):
    """The configured embedding model cannot be found or loaded."""

    status, code = 503, "embedder_unavailable"


@dataclass(frozen=True)
class EmbedderIdentity:
    """What a table records so queries and appends use the same embedder."""

    model_id: str
    dimension: int


class Embedder(Protocol):
    """What the rest of the engine asks of an embedder, whichever model is behind it.

    Why a protocol: an index keeps the embedder it was built with, so one process
    holds MiniLM, bge and e5 side by side (and a build holds the lazy stand-in);
    indexing, retrieval, generation and the API type against this and import no
    model module. Each concrete embedder satisfies it structurally, checked by mypy
    where the registry (`_load`) and `build_embedder` return one.
    """

    @property
    def name(self) -> str:
        """Its name in the registry (rag_system/embedding/registry.py)."""

    @property
    def identity(self) -> EmbedderIdentity:
        """What the index records, so queries and appends use the same model."""

    @property
    def precision(self) -> str:
        """How it computes (fp32, bf16, onnx, int4), for the health report."""

    @property
    def dimension(self) -> int: ...

    @property
    def max_content_tokens(self) -> int:
        """Largest text (in tokens) embedded without truncation: the chunker's budget."""

    def count_tokens(self, text: str) -> int: ...

    def count_tokens_batch(self, texts: list[str]) -> list[int]:
        """Tokens the model would see for each text, without special tokens or role prefixes."""

    def embed(self, texts: list[str], on_batch: Callable[[list[int]], None] | None = None,
              batch_size: int | None = None) -> np.ndarray:
        """Passages as float32 unit vectors in input order; `on_batch` gets each finished batch's positions."""

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        """Questions, in the form the model was trained to match against passages (its prefix or role)."""


class EmbedderBase:
    """What every embedder answers the same way from its `identity` and its `count_tokens_batch`."""

    identity: EmbedderIdentity

    @property
    def dimension(self) -> int:
        return self.identity.dimension

    def count_tokens(self, text: str) -> int:
        """Tokens the model would see for `text`, without special tokens."""
        return self.count_tokens_batch([text])[0]

    def count_tokens_batch(self, texts: list[str]) -> list[int]:
        raise NotImplementedError


class RecentVectors:
    """Vectors of question-sized calls, remembered per text (the `size` most recent).

    Why: one chat turn embeds its question for the semantic cache, again for
    the first stage and again to check quotes by meaning, ~10 ms each on 2
    cores. The embedders compute a question-sized call the same way every
    time (MiniLM in fp32, bge unpadded), so a remembered vector is exactly
    the one a new call computes.
    """

    def __init__(self, size: int = QUERY_CACHE_SIZE) -> None:
        self._size = size
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, texts: list[str], compute: Callable[[list[str]], np.ndarray]) -> np.ndarray:
        """The vectors of `texts`, `compute` called once for those not remembered."""
        with self._lock:
            found = {t: self._vectors[t] for t in texts if t in self._vectors}
            for t in found:
                self._vectors.move_to_end(t)
        missing = list(dict.fromkeys(t for t in texts if t not in found))
        if missing:
            fresh = compute(missing)
            with self._lock:
                for text, vector in zip(missing, fresh):
                    found[text] = self._vectors[text] = vector
                while len(self._vectors) > self._size:
                    self._vectors.popitem(last=False)
        return np.stack([found[t] for t in texts]).astype(np.float32, copy=True)

    def clear(self) -> None:
        with self._lock:
            self._vectors.clear()
