"""A small JSON filter language compiled to one LanceDB prefilter.

Users and clients send filters as JSON; they are never pasted into SQL. Each
field has a fixed column and a validator, strings are quoted by
`sql_string`, numbers must be integers, and anything unexpected is a
`FilterError` that names the offending key, so an API can answer 400.

    {"document_name": "nda.pdf"}                       equality
    {"document_id": ["ab12..", "cd34.."]}              IN (a file's id takes its parts too)
    {"document_name": {"in": ["a.pdf", "b.pdf"]}}      IN, explicit
    {"page": {"gte": 2, "lte": 5}}                     chunks overlapping pages 2-5
    {"chunk_index": {"gte": 0, "lt": 10}}              range
    {"block_type": ["table", "code"]}                  IN
    {"file_type": "pdf"}                               by file extension
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from common.errors import DomainError
from rag_system.indexing.store import documents_where, sql_in, sql_string

MAX_LIST = 1000
MAX_STRING = 1024
MAX_INT = 2**31 - 1
BLOCK_TYPES = frozenset({"heading", "paragraph", "list", "table", "code", "ocr"})
_FILE_TYPE = re.compile(r"^[a-z0-9]{1,10}$")
_RANGE_OPS = {"gte": ">=", "gt": ">", "lte": "<=", "lt": "<", "eq": "="}


class FilterError(DomainError, ValueError):
    """The filter object is malformed; the message says which part and why."""

    status, code = 400, "invalid_option"


def compile_filters(filters: Mapping[str, Any] | None) -> str | None:
    """Return a SQL prefilter for LanceDB, or None when there is nothing to filter."""
    if filters is None:
        return None
    if not isinstance(filters, Mapping):
        raise FilterError("filters must be a JSON object")
    clauses: list[str] = []
    for key in sorted(filters):
        compiler = _FIELDS.get(key)
        if compiler is None:
            raise FilterError(f"unknown filter field {key!r}; use one of {', '.join(sorted(_FIELDS))}")
        clauses.append(compiler(key, filters[key]))
    return " AND ".join(f"({c})" for c in clauses) if clauses else None


def _string(key: str, value: Any) -> str:
    if not isinstance(value, str) or not value or len(value) > MAX_STRING or "\x00" in value:
        raise FilterError(f"filter {key!r}: values must be non-empty strings up to {MAX_STRING} characters")
    return value


def _int(key: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_INT:
        raise FilterError(f"filter {key!r}: bounds must be integers between 0 and {MAX_INT}")
    return value


def _values(key: str, value: Any, check: Callable[[str, Any], str]) -> list[str]:
    if isinstance(value, Mapping):
        if set(value) == {"eq"}:
            value = value["eq"]
        elif set(value) == {"in"}:
            value = value["in"]
            if not isinstance(value, list):
                raise FilterError(f"filter {key!r}: 'in' takes a list")
        else:
            raise FilterError(f"filter {key!r}: use a value, a list, {{'eq': v}} or {{'in': [...]}}")
    items = value if isinstance(value, list) else [value]
    if not items or len(items) > MAX_LIST:
        raise FilterError(f"filter {key!r}: give between 1 and {MAX_LIST} values")
    return [check(key, item) for item in items]


def _column_in(column: str) -> Callable[[str, Any], str]:
    def compile_(key: str, value: Any) -> str:
        return sql_in(column, _values(key, value, _string))
    return compile_


def _block_type(key: str, value: Any) -> str:
    def check(k: str, v: Any) -> str:
        text = _string(k, v)
        if text not in BLOCK_TYPES:
            raise FilterError(f"filter {k!r}: unknown block type {text!r}; use {', '.join(sorted(BLOCK_TYPES))}")
        return text
    return sql_in("block_type", _values(key, value, check))


def _file_type(key: str, value: Any) -> str:
    def check(k: str, v: Any) -> str:
        text = _string(k, v).lower().lstrip(".")
        if not _FILE_TYPE.match(text):
            raise FilterError(f"filter {k!r}: file types are short extensions such as 'pdf'")
        return text
    types = _values(key, value, check)
    return " OR ".join(f"lower(document_name) LIKE {sql_string('%.' + t)}" for t in types)


def _range(key: str, value: Any, low_column: str, high_column: str) -> str:
    if isinstance(value, int):  # bools too: rejected by _int with a clear message
        value = {"eq": value}
    if not isinstance(value, Mapping) or not value:
        raise FilterError(f"filter {key!r}: use an integer or an object with gte/gt/lte/lt/eq")
    clauses = []
    for op, bound in sorted(value.items()):
        if op not in _RANGE_OPS:
            raise FilterError(f"filter {key!r}: unknown operator {op!r}; use gte, gt, lte, lt or eq")
        number = _int(key, bound)
        if op == "eq":  # the chunk spans this page
            clauses.append(f"{low_column} <= {number} AND {high_column} >= {number}")
        elif op in ("gte", "gt"):  # the chunk reaches at least this far
            clauses.append(f"{high_column} {_RANGE_OPS[op]} {number}")
        else:
            clauses.append(f"{low_column} {_RANGE_OPS[op]} {number}")
    return " AND ".join(clauses)


_FIELDS: dict[str, Callable[[str, Any], str]] = {
    # A mailbox's id finds its messages (`<id>-<n>`), since the gateway knows the file, not its parts.
    "document_id": lambda k, v: documents_where(_values(k, v, _string)),
    "document_name": _column_in("document_name"),
    "block_type": _block_type,
    "file_type": _file_type,
    "page": lambda k, v: _range(k, v, "page_start", "page_end"),
    "chunk_index": lambda k, v: _range(k, v, "chunk_index", "chunk_index"),
}
