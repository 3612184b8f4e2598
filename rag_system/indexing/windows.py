"""The window table of an index: each chunk's windows as rows, for full-text search.

Why a second table: BM25 over a 512-token chunk that holds several topics
ranks it by all of them at once, and long chunks are penalised by length
normalisation. Scoring the chunk by its best ~128-token window was worth
+0.09 nDCG@10 on rfc and +0.06 on docs for the full-text leg (see
Documentation/evaluation.md). Results are still whole chunks: the window
table only decides which chunks the full-text leg returns and in what order.

Each window row repeats its chunk's filterable columns (document id and name,
pages, chunk index, block type), so the compiled prefilter means the same on
this table as on the chunk table and a filter can never let a chunk in through
its windows only.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from rag_system.chunking.chunk import Chunk
from rag_system.indexing.connection import compact
from rag_system.indexing.languages import FtsConfig

if TYPE_CHECKING:
    from lancedb.query import MatchQuery

log = logging.getLogger(__name__)

WINDOWS_SUFFIX = "__windows"

#: Where a chunk sits in its document. The chunk table and its windows table
#: both start with these columns, so one compiled prefilter serves both legs.
LOCATION_FIELDS: tuple[pa.Field, ...] = (
    pa.field("chunk_id", pa.string(), nullable=False),
    pa.field("document_id", pa.string(), nullable=False),
    pa.field("document_name", pa.string(), nullable=False),
    pa.field("chunk_index", pa.int32(), nullable=False),
    pa.field("page_start", pa.int32(), nullable=False),
    pa.field("page_end", pa.int32(), nullable=False),
)

WINDOW_SCHEMA = pa.schema(
    [
        *LOCATION_FIELDS,
        pa.field("block_type", pa.string()),
        pa.field("window_index", pa.int32(), nullable=False),
        pa.field("text", pa.string(), nullable=False),
        pa.field("text_exact", pa.string(), nullable=False),
    ]
)

TEXT_COLUMN = "text"
#: The same text under a second analyzer: exact words, stop words kept.
EXACT_COLUMN = "text_exact"

#: Window hits fetched per chunk wanted: several windows of one chunk often
#: rank next to each other, and only the best one counts. 3 gave the same 50
#: chunks as 4 and 8 for every gold question of rfc, pydocs, docs and mixed and
#: at 100,000 chunks; 2 fell short of 50 chunks on a fifth of rfc's questions.
OVERFETCH = 3


def replace_rows(table: Any, keys: list[str], data: pa.Table, old: str) -> None:
    """Insert `data` and delete the rows matching `old` that `data` does not replace, in ONE commit.

    Why one commit: a reader between a delete and an append would see no
    version of a document at all, and a sync edits documents while people ask
    questions; with one commit a reader sees the old rows or the new ones.
    """
    (table.merge_insert(keys).when_matched_update_all().when_not_matched_insert_all()
     .when_not_matched_by_source_delete(old).execute(data))


def window_rows(document_ids: Sequence[str], document_name: str, chunks: Sequence[Chunk]) -> pa.Table:
    """The window table's rows of one file's chunks: one per window (a chunk without windows contributes its
    text), `document_ids[i]` being chunk i's. What `WindowTable.add` writes, and a distributed build's task
    writes as a fragment (rag_system/indexing/ray_tasks.py)."""
    rows: dict[str, list[Any]] = {name: [] for name in WINDOW_SCHEMA.names}
    for chunk, document_id in zip(chunks, document_ids, strict=True):
        texts = chunk.windows or (chunk.text,)
        for i, text in enumerate(texts[: len(texts) - chunk.vector_only_windows]):
            rows["chunk_id"].append(chunk.chunk_id)
            rows["document_id"].append(document_id)
            rows["document_name"].append(document_name)
            rows["chunk_index"].append(chunk.chunk_index)
            rows["page_start"].append(chunk.page_start)
            rows["page_end"].append(chunk.page_end)
            rows["block_type"].append(chunk.block_type)
            rows["window_index"].append(i)
            rows["text"].append(text)
            rows["text_exact"].append(text)
    return pa.table(rows, schema=WINDOW_SCHEMA)


class WindowTable:
    """Window rows of one index; written and deleted together with its chunks."""

    def __init__(self, table: Any) -> None:
        self.table = table

    @classmethod
    def create(cls, db: Any, name: str) -> WindowTable:
        return cls(db.create_table(name, schema=WINDOW_SCHEMA, exist_ok=True))

    def delete_documents(self, where: str) -> None:
        self.table.delete(where)

    def add(self, document_ids: Sequence[str], document_name: str, chunks: Sequence[Chunk],
            replacing: str | None = None) -> None:
        """One row per window (a chunk without windows contributes its text), `document_ids[i]` being
        chunk i's; with `replacing` (a filter on the old rows), the old rows go and the new ones come
        in one commit."""
        data = window_rows(document_ids, document_name, chunks)
        if replacing is not None:
            replace_rows(self.table, ["chunk_id", "window_index"], data, replacing)
        elif data.num_rows:
            self.table.add(data)

    def has_fts_index(self) -> bool:
        indexed = {tuple(i.columns) for i in self.table.list_indices() if i.index_type == "FTS"}
        return {(TEXT_COLUMN,), (EXACT_COLUMN,)} <= indexed

    def fts_current(self, wanted: FtsConfig) -> bool:
        return fts_indexes_current(self.table, {TEXT_COLUMN: wanted, EXACT_COLUMN: _exact(wanted)})

    def refresh_fts(self, wanted: FtsConfig, keep_versions_s: float = 3600.0) -> None:
        """`text` gets the configured analyzer; `text_exact` the same without stemming
        or stop-word removal (measured: the two together beat either, Documentation/evaluation.md)."""
        from lancedb.index import FTS

        exact = _exact(wanted)
        indices = {tuple(i.columns): i for i in self.table.list_indices() if i.index_type == "FTS"}
        for column, config in ((TEXT_COLUMN, wanted), (EXACT_COLUMN, exact)):
            current = indices.get((column,))
            details = dict(getattr(current, "index_details", None) or {}) if current else {}
            if current is None or any(details.get(k) != v for k, v in config.items()):
                log.info("building full-text index on window %s (%s)", column, json.dumps(config))
                self.table.create_index(column, config=FTS(with_position=False, **config), replace=True)
        compact(self.table, keep_versions_s)


def match_query(terms: str, column: str) -> MatchQuery:
    """LanceDB's full-text query of `terms` on `column` with its defaults (any term, no fuzziness)."""
    from lancedb.query import MatchQuery

    # The other fields default through `pydantic.Field(default, kw_only=True)`, which mypy's
    # dataclass_transform support does not read as a default.
    return MatchQuery(terms, column)  # type: ignore[call-arg]


def _exact(wanted: FtsConfig) -> FtsConfig:
    """The exact-words analyzer: the configured one without stemming or stop-word removal."""
    return {**wanted, "stem": False, "remove_stop_words": False}


def fts_indexes_current(table: Any, wanted: dict[str, FtsConfig]) -> bool:
    """Whether `table` has a full-text index per column of `wanted`, with that config and no unindexed rows."""
    found = {tuple(i.columns): i for i in table.list_indices() if i.index_type == "FTS"}
    for column, config in wanted.items():
        current = found.get((column,))
        details = dict(getattr(current, "index_details", None) or {}) if current else {}
        if current is None or any(details.get(k) != v for k, v in config.items()):
            return False
        if table.index_stats(current.name).num_unindexed_rows:
            return False
    return True
