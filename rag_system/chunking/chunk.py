"""A chunk as the index stores it: its id, text, pages, windows and metadata.

Why a module of its own: the indexing layer (the LanceDB tables, the writers,
re-embedding) reads and writes chunks but never chunks a document; it depends
on this record, not on the chunker's packing rules.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace

from rag_system.chunking.window_spans import KEY as VECTOR_WINDOWS
from rag_system.chunking.window_spans import spans_of


@dataclass(frozen=True)
class Chunk:
    chunk_id: str
    chunk_index: int
    text: str
    page_start: int
    page_end: int
    heading_path: str
    block_type: str
    token_count: int
    metadata: dict[str, object] = field(default_factory=dict)
    # Texts embedded for the vector leg when windows are on (else empty: the
    # chunk text itself is embedded).
    windows: tuple[str, ...] = ()
    # How many of `windows`, at the end, are embedded but not full-text indexed.
    vector_only_windows: int = 0


def chunk_id_for(document_id: str, version: str, ordinal: int) -> str:
    return hashlib.sha256(f"{document_id}:{version}:{ordinal}".encode()).hexdigest()[:32]


def with_windows(chunk: Chunk, prefix: str, windows: tuple[str, ...], vector_only: int) -> Chunk:
    """`chunk` with its windows, and where its vector-only ones are in its metadata (window_spans.py)."""
    record = spans_of(chunk.text, prefix, windows, vector_only) if vector_only else None
    metadata = {**chunk.metadata, VECTOR_WINDOWS: record} if record else chunk.metadata
    return replace(chunk, windows=windows, vector_only_windows=vector_only, metadata=metadata)


def metadata_json(chunk: Chunk) -> str:
    return json.dumps(chunk.metadata, ensure_ascii=False, sort_keys=True)
