"""Which embedder an index is built and queried with: the one its table records, else the one asked for.

The registry (rag_system/embedding/registry.py) knows the embedders by name; this module reads an
index's table to find its own, so the registry itself never opens the store.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rag_system.embedding.base import Embedder
from rag_system.embedding.registry import check_name, english_default, name_for_model
from rag_system.indexing.languages import detect_language
from rag_system.embedding.lazy import build_embedder
from rag_system.indexing.store import ChunkTable, list_indexes, table_exists, table_name

if TYPE_CHECKING:
    from rag_system.config import Settings

log = logging.getLogger(__name__)


def choose_embedder(db: Any, index: str, settings: Settings, given: Embedder | None, name: str | None,
                    sample: Callable[[], list[str]] | None = None) -> Embedder:
    """The embedder for a build of `index`: the one asked for, else the one the index was built with,
    else the given instance or the `EMBEDDER` default. A name that differs from the index's own is
    kept, so the table check refuses it with `EmbedderMismatchError`. `EMBEDDER=auto` picks by the
    language of the first documents (`sample`): English -> `english_default`, anything else -> e5-small."""
    if name is not None:
        check_name(name)
    recorded = recorded_embedder(db, index, settings)
    if name is not None and name != "auto":
        wanted = name
    elif recorded is not None:
        wanted = recorded
    elif name == "auto" or (given is None and settings.embedder == "auto"):
        language = detect_language(sample()) if sample is not None else "en"
        wanted = english_default(settings) if language == "en" else "e5-small"
        log.info("index %s: documents in %r, embedder %s (EMBEDDER=auto)", index, language, wanted)
    else:
        wanted = given.name if given is not None else settings.embedder
    if given is not None and given.name == wanted:
        return given
    return build_embedder(settings if settings.embedder == wanted else settings.with_overrides(embedder=wanted))


def recorded_embedder(db: Any, index: str, settings: Settings) -> str | None:
    """The registry name of the embedder an existing index was built with (None: new or unknown)."""
    if not table_exists(db, table_name(index)):
        return None
    model, _ = ChunkTable.open(db, index).recorded_identity()
    return name_for_model(model, settings)


def index_embedders(db: Any, settings: Settings) -> list[dict[str, object]]:
    """Every index with the embedder it was built with (read from its schema; no model is loaded)."""
    out: list[dict[str, object]] = []
    for index in list_indexes(db):
        model, dimension = ChunkTable.open(db, index).recorded_identity()
        out.append({"index": index, "embedder": name_for_model(model, settings), "model": model,
                    "dimension": dimension})
    return out
