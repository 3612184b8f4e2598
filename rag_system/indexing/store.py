"""The LanceDB chunk table of one index (DESIGN §3).

This module is the only place that knows table names, the column schema and
how the embedder identity is recorded. Everything goes through the LanceDB
connection API with a URI, never through local paths, so an `s3://` URI works
the same way as a folder.
"""

from __future__ import annotations

import json
import logging
import re
from datetime import timedelta
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from rag_system.chunking.chunker import Chunk, metadata_json
from rag_system.indexing.embedder import EmbedderIdentity

log = logging.getLogger(__name__)

TABLE_PREFIX = "idx_"
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
META_MODEL = b"docent.embedding_model"
META_DIM = b"docent.embedding_dim"
META_NORMALIZED = b"docent.normalized"


class InvalidIndexNameError(ValueError):
    """Index names become table names, so they are restricted to a safe alphabet."""


class IndexNotFoundError(LookupError):
    """The named index has no table in the store."""


class EmbedderMismatchError(RuntimeError):
    """The table was built with another embedder; vectors would be meaningless."""

    def __init__(self, index: str, table_model: str, table_dim: int, ours: EmbedderIdentity) -> None:
        super().__init__(
            f"index {index!r} was built with embedding model {table_model!r} ({table_dim}-d) "
            f"but the configured model is {ours.model_id!r} ({ours.dimension}-d); "
            f"set EMBEDDING_MODEL={table_model!r} or rebuild the index with the new model"
        )
        self.table_model = table_model


def validate_index_name(name: str) -> str:
    if not isinstance(name, str) or not _NAME_RE.match(name):
        raise InvalidIndexNameError(
            f"invalid index name {name!r}: use 1-64 letters, digits, '_' or '-', "
            "starting with a letter or digit"
        )
    return name


def table_name(index: str) -> str:
    return TABLE_PREFIX + validate_index_name(index)


def sql_string(value: str) -> str:
    """Quote a value for a LanceDB SQL filter; never interpolate raw strings."""
    if not isinstance(value, str) or "\x00" in value:
        raise ValueError("filter values must be strings without NUL characters")
    return "'" + value.replace("'", "''") + "'"


def sql_in(column: str, values: Iterable[str]) -> str:
    quoted = ", ".join(sql_string(v) for v in values)
    return f"{column} IN ({quoted})" if quoted else "false"


def chunk_schema(identity: EmbedderIdentity) -> pa.Schema:
    return pa.schema(
        [
            pa.field("chunk_id", pa.string(), nullable=False),
            pa.field("document_id", pa.string(), nullable=False),
            pa.field("document_name", pa.string(), nullable=False),
            pa.field("chunk_index", pa.int32(), nullable=False),
            pa.field("page_start", pa.int32(), nullable=False),
            pa.field("page_end", pa.int32(), nullable=False),
            pa.field("heading_path", pa.string()),
            pa.field("block_type", pa.string()),
            pa.field("text", pa.string(), nullable=False),
            pa.field("vector", pa.list_(pa.float32(), identity.dimension)),
            pa.field("metadata", pa.string()),
        ],
        metadata={
            META_MODEL: identity.model_id.encode(),
            META_DIM: str(identity.dimension).encode(),
            META_NORMALIZED: b"true",
        },
    )


def connect(uri: str, storage_options: dict[str, str] | None = None,
            read_consistency_s: float | None = None) -> Any:
    """Open the store. With `read_consistency_s`, long-lived table handles see
    other writers' commits within that many seconds (0 = every read checks)."""
    import lancedb

    interval = None if read_consistency_s is None else timedelta(seconds=read_consistency_s)
    return lancedb.connect(uri, storage_options=storage_options or None,
                           read_consistency_interval=interval)


def list_indexes(db: Any) -> list[str]:
    names = _table_names(db)
    return sorted(n[len(TABLE_PREFIX):] for n in names
                  if n.startswith(TABLE_PREFIX) and "__" not in n)


def _table_names(db: Any) -> list[str]:
    # `table_exists` is a namespace operation that local folders do not
    # support, so existence is answered from the (paginated) listing.
    names: list[str] = []
    token = None
    while True:
        page = db.list_tables(page_token=token)
        names.extend(page.tables)
        token = page.page_token
        if not token:
            return names


def table_exists(db: Any, name: str) -> bool:
    return name in _table_names(db)


class ChunkTable:
    """One index's chunk table, with the identity check done on open."""

    def __init__(self, db: Any, index: str, table: Any) -> None:
        self.db = db
        self.index = index
        self.table = table

    @classmethod
    def open(cls, db: Any, index: str, identity: EmbedderIdentity | None = None) -> ChunkTable:
        name = table_name(index)
        if not table_exists(db, name):
            raise IndexNotFoundError(f"index {index!r} does not exist")
        table = cls(db, index, db.open_table(name))
        if identity is not None:
            table.check_identity(identity)
        return table

    @classmethod
    def open_or_create(cls, db: Any, index: str, identity: EmbedderIdentity) -> ChunkTable:
        name = table_name(index)
        if table_exists(db, name):
            return cls.open(db, index, identity)
        log.info("creating table %s", name)
        return cls(db, index, db.create_table(name, schema=chunk_schema(identity), exist_ok=True))

    def recorded_identity(self) -> tuple[str, int]:
        meta = self.table.schema.metadata or {}
        return meta.get(META_MODEL, b"").decode(), int(meta.get(META_DIM, b"0") or 0)

    def check_identity(self, identity: EmbedderIdentity) -> None:
        model, dim = self.recorded_identity()
        if model != identity.model_id or dim != identity.dimension:
            raise EmbedderMismatchError(self.index, model, dim, identity)

    def count(self, where: str | None = None) -> int:
        return int(self.table.count_rows(where))

    def delete_documents(self, document_ids: Sequence[str]) -> None:
        if document_ids:
            self.table.delete(sql_in("document_id", document_ids))

    def add_chunks(self, document_id: str, document_name: str, chunks: Sequence[Chunk],
                   vectors: np.ndarray) -> None:
        """Write one document's chunks in a single commit (never half a document)."""
        if not chunks:
            return
        schema = self.table.schema
        dim = schema.field("vector").type.list_size
        flat = pa.array(np.ascontiguousarray(vectors, dtype=np.float32).reshape(-1))
        data = pa.table(
            {
                "chunk_id": [c.chunk_id for c in chunks],
                "document_id": [document_id] * len(chunks),
                "document_name": [document_name] * len(chunks),
                "chunk_index": pa.array([c.chunk_index for c in chunks], pa.int32()),
                "page_start": pa.array([c.page_start for c in chunks], pa.int32()),
                "page_end": pa.array([c.page_end for c in chunks], pa.int32()),
                "heading_path": [c.heading_path for c in chunks],
                "block_type": [c.block_type for c in chunks],
                "text": [c.text for c in chunks],
                "vector": pa.FixedSizeListArray.from_arrays(flat, dim),
                "metadata": [metadata_json(c) for c in chunks],
            },
            schema=schema,
        )
        self.table.add(data)

    def document_rows(self, document_id: str, columns: Sequence[str] | None = None) -> list[dict[str, Any]]:
        query = self.table.search().where(sql_in("document_id", [document_id])).limit(None)
        if columns:
            query = query.select(list(columns))
        rows = query.to_list()
        return sorted(rows, key=lambda r: r["chunk_index"])

    def has_fts_index(self) -> bool:
        return any(i.index_type == "FTS" for i in self.table.list_indices())

    def refresh_fts(self, *, stem: bool, remove_stop_words: bool, ascii_folding: bool) -> None:
        """Keep the native full-text index on `text` current and as configured."""
        from lancedb.index import FTS

        wanted = {"stem": stem, "remove_stop_words": remove_stop_words, "ascii_folding": ascii_folding}
        current = next((i for i in self.table.list_indices() if i.index_type == "FTS"), None)
        details = dict(getattr(current, "index_details", None) or {}) if current else {}
        if current is None or any(details.get(k) != v for k, v in wanted.items()):
            log.info("building full-text index for %s (%s)", self.index, json.dumps(wanted))
            self.table.create_index("text", config=FTS(with_position=False, **wanted), replace=True)
        self.table.optimize()
