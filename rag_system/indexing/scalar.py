"""Scalar indexes on the columns that lookups and prefilters name.

Why: the first stage reads the fused winners' rows by `chunk_id`, deletes
and document views select by `document_id`, and filters name `document_id`
and `block_type`. Without an index each of those is a scan of the column, a
few ms at rfc's size and a large share of a query at a million chunks
(Documentation/evaluation.md, "A million chunks"). LanceDB keeps them current
on `optimize` (`connection.compact`), which every build runs.
"""

from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger(__name__)

#: Column -> index kind: BTREE for many distinct values, BITMAP for a handful.
CHUNK_INDEXES = {"chunk_id": "BTREE", "document_id": "BTREE", "block_type": "BITMAP"}
WINDOW_INDEXES = {"document_id": "BTREE", "block_type": "BITMAP"}


def missing(table: Any, wanted: dict[str, str]) -> list[str]:
    """The columns of `wanted` that have no index yet."""
    indexed = {tuple(i.columns) for i in table.list_indices()}
    return [column for column in wanted if (column,) not in indexed]


def ensure(table: Any, wanted: dict[str, str]) -> None:
    """Create the scalar indexes of `wanted` that `table` lacks (existing ones are kept current by optimize)."""
    from lancedb.index import BTree, Bitmap

    for column in missing(table, wanted):
        log.info("building %s index on %s", wanted[column], column)
        table.create_index(column, config=BTree() if wanted[column] == "BTREE" else Bitmap(), replace=True)
