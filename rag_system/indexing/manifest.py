"""Per-file manifest of an index, stored as a LanceDB table beside the chunks.

Why in the store and not a JSON file next to it: the store may be an object
store (`s3://`), and the manifest must change in step with the chunk table.
The manifest row of a file is written only after its chunks are committed, so
a build killed at any point is repaired by re-running it: a file whose row is
missing or stale is simply processed again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any

import pyarrow as pa

from rag_system.indexing.store import compact, sql_in, table_exists, table_name

MANIFEST_SUFFIX = "__manifest"


@dataclass(frozen=True)
class FileRecord:
    path: str  # absolute path of the source, the manifest key
    document_id: str  # sha256 of the bytes
    document_name: str
    file_type: str
    size: int
    pages: int
    chunks: int
    chunker_version: str
    embedding_model: str
    ocr_engine: str
    indexed_at: str


_SCHEMA = pa.schema(
    [
        pa.field("path", pa.string(), nullable=False),
        pa.field("document_id", pa.string(), nullable=False),
        pa.field("document_name", pa.string()),
        pa.field("file_type", pa.string()),
        pa.field("size", pa.int64()),
        pa.field("pages", pa.int32()),
        pa.field("chunks", pa.int32()),
        pa.field("chunker_version", pa.string()),
        pa.field("embedding_model", pa.string()),
        pa.field("ocr_engine", pa.string()),
        pa.field("indexed_at", pa.string()),
    ]
)


def manifest_table_name(index: str) -> str:
    return table_name(index) + MANIFEST_SUFFIX


class Manifest:
    def __init__(self, table: Any) -> None:
        self.table = table

    @classmethod
    def open_or_create(cls, db: Any, index: str) -> Manifest:
        name = manifest_table_name(index)
        if table_exists(db, name):
            return cls(db.open_table(name))
        return cls(db.create_table(name, schema=_SCHEMA, exist_ok=True))

    @classmethod
    def open_existing(cls, db: Any, index: str) -> Manifest | None:
        name = manifest_table_name(index)
        return cls(db.open_table(name)) if table_exists(db, name) else None

    def records(self) -> dict[str, FileRecord]:
        names = [f.name for f in fields(FileRecord)]
        rows = self.table.to_arrow().select(names).to_pylist()
        return {row["path"]: FileRecord(**row) for row in rows}

    def upsert(self, record: FileRecord) -> None:
        self.upsert_all([record])

    def upsert_all(self, records: Sequence[FileRecord]) -> None:
        """Insert or replace these records in one commit (a distributed build records all its files at once)."""
        if not records:
            return
        data = pa.Table.from_pylist([asdict(r) for r in records], schema=_SCHEMA)
        (self.table.merge_insert("path")
         .when_matched_update_all()
         .when_not_matched_insert_all()
         .execute(data))

    def remove(self, paths: Sequence[str]) -> None:
        if paths:
            self.table.delete(sql_in("path", paths))

    def compact(self, keep_versions_s: float = 3600.0) -> None:
        compact(self.table, keep_versions_s)
