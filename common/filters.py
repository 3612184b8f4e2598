"""The grammar of a request's `filters` (a metadata prefilter), read by both services.

The gateway checks a chat's filters with it before it stores the question, and the RAG API reads
the same terms into its LanceDB prefilter (`rag_system/retrieval/filters.py`), so a filter one
refuses the other refuses too, with the same code and message. Each field takes values of one
shape; anything unexpected is a `FilterError` naming the offending key.

    {"document_name": "nda.pdf"}                       equality
    {"document_id": ["ab12..", "cd34.."]}              any of (a file's id takes its parts too)
    {"document_name": {"in": ["a.pdf", "b.pdf"]}}      any of, explicit
    {"page": {"gte": 2, "lte": 5}}                     chunks overlapping pages 2-5
    {"chunk_index": {"gte": 0, "lt": 10}}              range
    {"block_type": ["table", "code"]}                  any of
    {"file_type": "pdf"}                               by file extension
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from common.errors import ApiError, DomainError

MAX_LIST = 1000
MAX_STRING = 1024
MAX_INT = 2**31 - 1
BLOCK_TYPES = frozenset({"heading", "paragraph", "list", "table", "code", "ocr"})
RANGE_OPS = ("eq", "gt", "gte", "lt", "lte")
_FILE_TYPE = re.compile(r"^[a-z0-9]{1,10}$")


class FilterError(DomainError, ValueError):
    """The filter object is malformed; the message says which part and why."""

    status, code = 400, "invalid_filters"


@dataclass(frozen=True)
class Term:
    """One field's condition: any of `values` (a value field), or every (operator, bound) of `bounds` (a range)."""

    field: str
    values: tuple[str, ...] = ()
    bounds: tuple[tuple[str, int], ...] = ()


def parse_filters(filters: Any) -> tuple[Term, ...]:
    """The terms of a filter object, by field name; `None` or `{}` is no term."""
    if filters is None:
        return ()
    if not isinstance(filters, Mapping):
        raise FilterError("filters must be a JSON object")
    terms: list[Term] = []
    for key in sorted(filters):
        if key in RANGE_FIELDS:
            terms.append(Term(key, bounds=_bounds(key, filters[key])))
        elif key in VALUE_FIELDS:
            terms.append(Term(key, values=_values(key, filters[key], VALUE_FIELDS[key])))
        else:
            raise FilterError(f"unknown filter field {key!r}; use one of {', '.join(sorted(FIELDS))}")
    return tuple(terms)


def check_filters(filters: Any) -> Any:
    """The option table's check of `filters`: the object as sent, or the 400 both services answer."""
    try:
        parse_filters(filters)
    except FilterError as exc:
        raise ApiError(400, "invalid_filters", f"invalid filters: {exc}") from exc
    return filters


def _string(key: str, value: Any) -> str:
    if not isinstance(value, str) or not value or len(value) > MAX_STRING or "\x00" in value:
        raise FilterError(f"filter {key!r}: values must be non-empty strings up to {MAX_STRING} characters")
    return value


def _int(key: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_INT:
        raise FilterError(f"filter {key!r}: bounds must be integers between 0 and {MAX_INT}")
    return value


def _block_type(key: str, value: Any) -> str:
    text = _string(key, value)
    if text not in BLOCK_TYPES:
        raise FilterError(f"filter {key!r}: unknown block type {text!r}; use {', '.join(sorted(BLOCK_TYPES))}")
    return text


def _file_type(key: str, value: Any) -> str:
    text = _string(key, value).lower().lstrip(".")
    if not _FILE_TYPE.match(text):
        raise FilterError(f"filter {key!r}: file types are short extensions such as 'pdf'")
    return text


def _values(key: str, value: Any, check: Callable[[str, Any], str]) -> tuple[str, ...]:
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
    return tuple(check(key, item) for item in items)


def _bounds(key: str, value: Any) -> tuple[tuple[str, int], ...]:
    if isinstance(value, int):  # bools too: rejected by _int with a clear message
        value = {"eq": value}
    if not isinstance(value, Mapping) or not value:
        raise FilterError(f"filter {key!r}: use an integer or an object with gte/gt/lte/lt/eq")
    bounds = []
    for op, bound in sorted(value.items()):
        if op not in RANGE_OPS:
            raise FilterError(f"filter {key!r}: unknown operator {op!r}; use gte, gt, lte, lt or eq")
        bounds.append((op, _int(key, bound)))
    return tuple(bounds)


#: Fields that take one value or a list of them, each value checked (and normalised: `.PDF` -> `pdf`).
VALUE_FIELDS: dict[str, Callable[[str, Any], str]] = {
    "document_id": _string, "document_name": _string, "block_type": _block_type, "file_type": _file_type}
#: Fields that take an integer or bounds.
RANGE_FIELDS = ("page", "chunk_index")
FIELDS = (*VALUE_FIELDS, *RANGE_FIELDS)
