"""The LanceDB chunk table of one index (Documentation/indexing.md).

This module is the only place that knows table names, the column schema and
how the embedder identity is recorded. Everything goes through the LanceDB
connection API with a URI, never through local paths, so an `s3://` URI works
the same way as a folder.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from common.document_ids import part_number
from common.errors import DomainError
from rag_system.chunking.chunk import Chunk
# connect, open_store, list_indexes and is_missing_file are also read from here by the rest of the product
from rag_system.indexing.connection import (TABLE_PREFIX, compact, connect, is_missing_file,  # noqa: F401
                                            list_indexes, open_store, table_exists)
from rag_system.indexing import scalar
# sql_string, sql_in and documents_where are also read from here by the rest of the product
from rag_system.indexing.sql import documents_where, sql_in, sql_string  # noqa: F401
from rag_system.embedding.base import EmbedderIdentity
# the schema and rows are also read from here by the rest of the product
from rag_system.indexing.chunk_rows import (META_DIM, META_MODEL, META_NORMALIZED, META_WINDOWS,  # noqa: F401
                                            WINDOWS_COLUMN, chunk_rows, chunk_schema)
from rag_system.indexing.languages import FtsConfig
from rag_system.indexing.window_vectors import VECTORS_SUFFIX, WindowVectorTable
from rag_system.indexing.windows import (WINDOWS_SUFFIX, WindowTable, fts_indexes_current,
                                         replace_rows)

log = logging.getLogger(__name__)

_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")


class VectorLayoutMismatchError(RuntimeError):
    """The table stores its vectors in another layout than the settings ask for."""


class InvalidIndexNameError(DomainError, ValueError):
    """Index names become table names, so they are restricted to a safe alphabet."""

    status, code = 400, "invalid_option"


class IndexNotFoundError(DomainError, LookupError):
    """The named index has no table in the store."""

    status, code = 404, "index_not_found"


class EmbedderMismatchError(DomainError, RuntimeError):
    """The table was built with another embedder; vectors would be meaningless."""

    status, code = 409, "embedder_mismatch"

    def __init__(self, index: str, table_model: str, table_dim: int, ours: EmbedderIdentity) -> None:
        super().__init__(
            f"index {index!r} was built with embedding model {table_model!r} ({table_dim}-d) "
            f"but the configured model is {ours.model_id!r} ({ours.dimension}-d); "
            "an index keeps the embedder it was built with: re-embed it (`python -m rag_system reembed "
            f"--index {index} --embedder <name>`), rebuild it or build a new index to use another one, "
            f"or, for a custom model, set EMBEDDING_MODEL={table_model!r}"
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


class ChunkTable:
    """One index's chunk table, with the identity check done on open."""

    def __init__(self, db: Any, index: str, table: Any, windows: WindowTable | None = None,
                 vectors: WindowVectorTable | None = None) -> None:
        self.db = db
        self.index = index
        self.table = table
        # Full-text rows per window; None for tables built without windows.
        self.windows = windows
        # Vector rows per window (what the vector leg searches); None without windows, and for an
        # index built before this table existed until its next build fills it (`ensure_vectors`).
        self.vectors = vectors

    @classmethod
    def open(cls, db: Any, index: str, identity: EmbedderIdentity | None = None) -> ChunkTable:
        name = table_name(index)
        if not table_exists(db, name):
            raise IndexNotFoundError(f"index {index!r} does not exist")
        windows = WindowTable(db.open_table(name + WINDOWS_SUFFIX)) \
            if table_exists(db, name + WINDOWS_SUFFIX) else None
        vectors = WindowVectorTable(db.open_table(name + VECTORS_SUFFIX)) \
            if windows is not None and table_exists(db, name + VECTORS_SUFFIX) else None
        table = cls(db, index, db.open_table(name), windows, vectors)
        if identity is not None:
            table.check_identity(identity)
        return table

    @classmethod
    def open_or_create(cls, db: Any, index: str, identity: EmbedderIdentity,
                       window_tokens: int = 0) -> ChunkTable:
        name = table_name(index)
        if table_exists(db, name):
            table = cls.open(db, index, identity)
            if table.window_tokens() != window_tokens:
                raise VectorLayoutMismatchError(
                    f"index {index!r} stores vectors for windows of {table.window_tokens()} tokens "
                    f"(0 = one per chunk) but CHUNK_WINDOW_TOKENS is {window_tokens}")
            return table
        log.info("creating table %s", name)
        return cls._create(db, index, identity, window_tokens)

    @classmethod
    def _create(cls, db: Any, index: str, identity: EmbedderIdentity, window_tokens: int) -> ChunkTable:
        name = table_name(index)
        # The window tables first: a chunk table with windows never exists without them.
        windows = WindowTable.create(db, name + WINDOWS_SUFFIX) if window_tokens else None
        vectors = WindowVectorTable.create(db, name + VECTORS_SUFFIX, identity.dimension) if window_tokens else None
        return cls(db, index, db.create_table(name, schema=chunk_schema(identity, window_tokens),
                                              exist_ok=True), windows, vectors)

    @classmethod
    def recreate(cls, db: Any, index: str, identity: EmbedderIdentity, window_tokens: int) -> ChunkTable:
        """Drop and create the table empty (its vector layout changed, so every row is stale)."""
        name = table_name(index)
        log.warning("index %s: vector layout changed; dropping its chunks, every file is re-indexed", index)
        db.drop_table(name)
        for suffix in (WINDOWS_SUFFIX, VECTORS_SUFFIX):
            if table_exists(db, name + suffix):
                db.drop_table(name + suffix)
        return cls._create(db, index, identity, window_tokens)

    def checkout_latest(self) -> None:
        """Move every handle of this index to the newest version (after a read hit a removed file)."""
        self.table.checkout_latest()
        for side in (self.windows, self.vectors):
            if side is not None:
                side.table.checkout_latest()

    def window_tokens(self) -> int:
        """The window size the table was built for (0: one vector per chunk, older tables too)."""
        meta = self.table.schema.metadata or {}
        if WINDOWS_COLUMN not in self.table.schema.names or self.windows is None:
            return 0  # a half-made layout counts as none, so the next build redoes it
        return int(meta.get(META_WINDOWS, b"0") or 0)

    @property
    def vector_column(self) -> str:
        """The column the vector leg searches: the windows when the table has them."""
        return WINDOWS_COLUMN if WINDOWS_COLUMN in self.table.schema.names else "vector"

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
        """Delete these documents, and every part of a file whose id is among them."""
        if document_ids:
            where = documents_where(document_ids)
            self.table.delete(where)
            for side in (self.windows, self.vectors):
                if side is not None:
                    side.delete_documents(where)

    def add_chunks(self, document_id: str, document_name: str, chunks: Sequence[Chunk],
                   vectors: np.ndarray, window_vectors: Sequence[np.ndarray] | None = None,
                   replacing: Sequence[str] = (), part_ids: Sequence[str] | None = None) -> None:
        """Write one file's chunks in a single commit (never half a document); the rows of the
        `replacing` document ids (and their parts) go in that same commit (per table), so a reader
        sees old or new. `window_vectors[i]`: chunk i's (n_i, d) window vectors; `part_ids[i]`: chunk
        i's document id when not `document_id` (a mailbox's message, `common/document_ids.py`).
        """
        if not chunks:
            return
        data, ids = chunk_rows(self.table.schema, document_id, document_name, chunks, vectors, window_vectors,
                               part_ids)
        old = documents_where(replacing) if replacing else None
        if self.windows is not None:
            # Windows first: a crash in between leaves orphan windows, which the
            # re-run deletes with the document; the legs ignore window hits
            # whose chunk is missing.
            self.windows.add(ids, document_name, chunks, old)
        if self.vectors is not None and window_vectors is not None:
            self.vectors.add(ids, document_name, chunks, window_vectors, old)
        if replacing:
            replace_rows(self.table, ["chunk_id"], data, documents_where(replacing))
        else:
            self.table.add(data)

    def rows_by_id(self, chunk_ids: Sequence[str], columns: Sequence[str]) -> list[dict[str, Any]]:
        """The rows of these chunks, in the order given (missing ids are skipped)."""
        if not chunk_ids:
            return []
        rows = (self.table.search().where(sql_in("chunk_id", chunk_ids))
                .select(list(columns)).limit(len(chunk_ids)).to_list())
        by_id = {row["chunk_id"]: row for row in rows}
        return [by_id[c] for c in chunk_ids if c in by_id]

    def document_rows(self, document_id: str, columns: Sequence[str] | None = None) -> list[dict[str, Any]]:
        """A document's rows in reading order; a file's id reads all its parts, part by part."""
        query = self.table.search().where(documents_where([document_id])).limit(None)
        if columns:
            query = query.select(list(dict.fromkeys([*columns, "document_id", "chunk_index"])))
        rows = query.to_list()
        return sorted(rows, key=lambda r: (part_number(r["document_id"]), r["chunk_index"]))

    def sample_texts(self, limit: int = 200) -> list[str]:
        """The text of up to `limit` chunks, in storage order (what language detection reads)."""
        if self.count() == 0:
            return []
        return [str(t) for t in self.table.head(limit).column("text").to_pylist()]

    def has_ann_index(self) -> bool:
        """Whether the vectors the vector leg searches (the window vector rows, when present) have an ANN index."""
        if self.vectors is not None:
            return self.vectors.has_ann_index()
        return _vector_index(self.table, self.vector_column) is not None

    def refresh_ann(self, min_chunks: int) -> str | None:
        """Build the ANN index on the searched vectors once the table holds
        `min_chunks` chunks (0 = never); the index type built, or None.

        Why a threshold: exact search is exact and, below some size, also fast
        enough (rfc's 1,286 chunks: 40 ms; 100,000: 424 ms, Documentation/
        evaluation.md); an index costs build time and a little recall. Once
        built, `compact` (LanceDB `optimize`) adds later rows to it.
        """
        if min_chunks <= 0 or self.has_ann_index() or self.count() < min_chunks:
            return None
        if self.vectors is not None:
            log.info("building the window vectors' ANN index of %s (%d chunks)", self.index, self.count())
            return self.vectors.create_ann_index()
        # An index that predates the window vector rows until its next build (`ensure_vectors`):
        # LanceDB indexes a multivector column with IVF_PQ only (HNSW variants take single vectors).
        kind = "IVF_PQ" if self.vector_column == WINDOWS_COLUMN else "IVF_HNSW_SQ"
        log.info("building %s index on %s.%s (%d chunks)", kind, self.index, self.vector_column, self.count())
        self.table.create_index(vector_column_name=self.vector_column, metric="cosine", index_type=kind)
        return kind

    def lacks_vectors(self) -> bool:
        """Whether this windowed index predates its window vector rows (its next build adds them)."""
        return self.windows is not None and self.vectors is None and WINDOWS_COLUMN in self.table.schema.names

    def ensure_vectors(self) -> int:
        """Give an index that predates the window vector rows that table, filled from the chunk table's
        multivectors in one commit (an interrupted fill leaves no table); the rows written."""
        if not self.lacks_vectors():
            return 0
        log.info("index %s: writing its window vectors as rows of their own", self.index)
        self.vectors, written = WindowVectorTable.backfill(self.db, table_name(self.index) + VECTORS_SUFFIX,
                                                           self.table.schema.field("vector").type.list_size,
                                                           self.table)
        return written

    def has_fts_index(self) -> bool:
        """Whether the table the full-text leg searches (the windows, when present) is indexed."""
        if self.windows is not None:
            return self.windows.has_fts_index()
        return any(i.index_type == "FTS" for i in self.table.list_indices())

    def fts_current(self, *, stem: bool, remove_stop_words: bool, ascii_folding: bool,
                    language: str = "English", base_tokenizer: str = "simple") -> bool:
        """Whether every full-text index exists as configured and covers every row (nothing to refresh)."""
        wanted = FtsConfig(stem=stem, remove_stop_words=remove_stop_words, ascii_folding=ascii_folding,
                           language=language, base_tokenizer=base_tokenizer)
        chunk_fts: dict[str, FtsConfig] = {"text": wanted} if self.windows is None else {}
        if not fts_indexes_current(self.table, chunk_fts) or scalar.missing(self.table, scalar.CHUNK_INDEXES):
            return False
        if self.windows is not None and scalar.missing(self.windows.table, scalar.WINDOW_INDEXES):
            return False
        if self.lacks_vectors() or (self.vectors is not None
                                    and scalar.missing(self.vectors.table, scalar.WINDOW_INDEXES)):
            return False
        return self.windows is None or self.windows.fts_current(wanted)

    def refresh_fts(self, *, stem: bool, remove_stop_words: bool, ascii_folding: bool,
                    language: str = "English", base_tokenizer: str = "simple",
                    keep_versions_s: float = 3600.0) -> None:
        """Keep the native full-text indexes current and as configured (analyzer language and
        tokenizer too: rag_system/indexing/languages.py): on the window table's text when the index
        has windows, else on the chunks' `text`. The chunk text of a windowed index is not indexed:
        nothing searches it, and at a million chunks it was a third of the full-text build time."""
        from lancedb.index import FTS

        wanted = FtsConfig(stem=stem, remove_stop_words=remove_stop_words, ascii_folding=ascii_folding,
                           language=language, base_tokenizer=base_tokenizer)
        current = next((i for i in self.table.list_indices() if i.index_type == "FTS"), None)
        details = dict(getattr(current, "index_details", None) or {}) if current else {}
        if self.windows is None and (current is None or any(details.get(k) != v for k, v in wanted.items())):
            log.info("building full-text index for %s (%s)", self.index, json.dumps(wanted))
            self.table.create_index("text", config=FTS(with_position=False, **wanted), replace=True)
        scalar.ensure(self.table, scalar.CHUNK_INDEXES)
        compact(self.table, keep_versions_s)
        if self.windows is not None:
            scalar.ensure(self.windows.table, scalar.WINDOW_INDEXES)
            self.windows.refresh_fts(wanted, keep_versions_s)
        self.ensure_vectors()
        if self.vectors is not None:
            scalar.ensure(self.vectors.table, scalar.WINDOW_INDEXES)
            compact(self.vectors.table, keep_versions_s)


def _vector_index(table: Any, column: str) -> Any | None:
    return next((i for i in table.list_indices()
                 if i.index_type != "FTS" and list(i.columns) == [column]), None)
