"""The chunk table's columns and the rows of one file, as both builds write them.

Why apart from `store.py`: a single-process build (`ChunkTable.add_chunks`) and a distributed build's
task (`ray_tasks.py`, which writes Lance fragments and opens no table) must make the same rows, so
the schema and the row builder are one piece of their own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from rag_system.chunking.chunk import Chunk, metadata_json
from rag_system.embedding.base import EmbedderIdentity
from rag_system.indexing.window_vectors import multivector_column
from rag_system.indexing.windows import LOCATION_FIELDS

META_MODEL = b"docent.embedding_model"
META_DIM = b"docent.embedding_dim"
META_NORMALIZED = b"docent.normalized"
META_WINDOWS = b"docent.vector_windows"
#: Multivector column: one vector per window of a chunk (see `ChunkerOptions.window_tokens`).
WINDOWS_COLUMN = "vectors"


def chunk_schema(identity: EmbedderIdentity, window_tokens: int = 0) -> pa.Schema:
    """The chunk table's columns; with windows, a multivector column of window vectors.

    `vector` always holds one unit vector per chunk (with windows, their
    normalised mean), so consumers that want one vector per chunk still work.
    """
    windows = [pa.field(WINDOWS_COLUMN, pa.list_(pa.list_(pa.float32(), identity.dimension)))] \
        if window_tokens else []
    return pa.schema(
        [
            *LOCATION_FIELDS,
            pa.field("heading_path", pa.string()),
            pa.field("block_type", pa.string()),
            pa.field("text", pa.string(), nullable=False),
            pa.field("vector", pa.list_(pa.float32(), identity.dimension)),
            pa.field("metadata", pa.string()),
            *windows,
        ],
        metadata={
            META_MODEL: identity.model_id.encode(),
            META_DIM: str(identity.dimension).encode(),
            META_NORMALIZED: b"true",
            META_WINDOWS: str(window_tokens).encode(),
        },
    )


def chunk_rows(schema: pa.Schema, document_id: str, document_name: str, chunks: Sequence[Chunk],
               vectors: np.ndarray, window_vectors: Sequence[np.ndarray] | None = None,
               part_ids: Sequence[str] | None = None) -> tuple[pa.Table, list[str]]:
    """The chunk table's rows of one file (in the table's `schema`) and each chunk's document id.

    What `ChunkTable.add_chunks` writes, and a distributed build's task writes as a fragment
    (rag_system/indexing/ray_tasks.py): one function, so both builds make the same rows.
    `window_vectors` are required exactly when the schema has the windows column.
    """
    dim = schema.field("vector").type.list_size
    flat = pa.array(np.ascontiguousarray(vectors, dtype=np.float32).reshape(-1))
    has_windows = WINDOWS_COLUMN in schema.names
    if has_windows != (window_vectors is not None):
        raise ValueError("window vectors must be given exactly when the table stores them")
    ids = [document_id] * len(chunks) if part_ids is None else list(part_ids)
    if len(ids) != len(chunks):
        raise ValueError("one document id per chunk is required")
    extra: dict[str, Any] = {}
    if window_vectors is not None:
        if len(window_vectors) != len(chunks):
            raise ValueError("one array of window vectors per chunk is required")
        extra[WINDOWS_COLUMN] = multivector_column(window_vectors, dim)
    data = pa.table(
        {
            "chunk_id": [c.chunk_id for c in chunks],
            "document_id": ids,
            "document_name": [document_name] * len(chunks),
            "chunk_index": pa.array([c.chunk_index for c in chunks], pa.int32()),
            "page_start": pa.array([c.page_start for c in chunks], pa.int32()),
            "page_end": pa.array([c.page_end for c in chunks], pa.int32()),
            "heading_path": [c.heading_path for c in chunks],
            "block_type": [c.block_type for c in chunks],
            "text": [c.text for c in chunks],
            "vector": pa.FixedSizeListArray.from_arrays(flat, dim),
            "metadata": [metadata_json(c) for c in chunks],
            **extra,
        },
        schema=schema,
    )
    return data, ids
