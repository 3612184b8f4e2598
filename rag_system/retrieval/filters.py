"""A request's `filters` compiled to one LanceDB prefilter.

The grammar (fields, value shapes, limits) is `common/filters.py`, which the gateway reads too;
this module only writes the checked terms as SQL. Filters are never pasted into SQL: strings are
quoted by `sql_string`, bounds are checked integers, columns are fixed per field.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from common.filters import FilterError, Term, parse_filters
from rag_system.indexing.store import documents_where, sql_in, sql_string

__all__ = ["FilterError", "compile_filters"]

_SQL_OPS = {"gte": ">=", "gt": ">", "lte": "<=", "lt": "<"}


def compile_filters(filters: Mapping[str, Any] | None) -> str | None:
    """Return a SQL prefilter for LanceDB, or None when there is nothing to filter."""
    clauses = [_SQL[term.field](term) for term in parse_filters(filters)]
    return " AND ".join(f"({c})" for c in clauses) if clauses else None


def _file_types(term: Term) -> str:
    return " OR ".join(f"lower(document_name) LIKE {sql_string('%.' + t)}" for t in term.values)


def _range(low_column: str, high_column: str) -> Callable[[Term], str]:
    def compile_(term: Term) -> str:
        clauses = []
        for op, number in term.bounds:
            if op == "eq":  # the chunk spans this page
                clauses.append(f"{low_column} <= {number} AND {high_column} >= {number}")
            elif op in ("gte", "gt"):  # the chunk reaches at least this far
                clauses.append(f"{high_column} {_SQL_OPS[op]} {number}")
            else:
                clauses.append(f"{low_column} {_SQL_OPS[op]} {number}")
        return " AND ".join(clauses)
    return compile_


_SQL: dict[str, Callable[[Term], str]] = {
    # A mailbox's id finds its messages (`<id>-<n>`), since the gateway knows the file, not its parts.
    "document_id": lambda t: documents_where(t.values),
    "document_name": lambda t: sql_in("document_name", t.values),
    "block_type": lambda t: sql_in("block_type", t.values),
    "file_type": _file_types,
    "page": _range("page_start", "page_end"),
    "chunk_index": _range("chunk_index", "chunk_index"),
}
