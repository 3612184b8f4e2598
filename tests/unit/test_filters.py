"""The filter language compiles to safe SQL or fails with a clear FilterError."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rag_system.retrieval.filters import FilterError, compile_filters
from rag_system.retrieval.fts_query import sanitize_fts_query


@pytest.mark.parametrize("filters, sql", [
    (None, None),
    ({}, None),
    ({"document_name": "nda.pdf"}, "(document_name IN ('nda.pdf'))"),
    ({"document_id": ["a", "b"]}, "(document_id IN ('a', 'b'))"),
    ({"document_name": {"in": ["x'y.pdf"]}}, "(document_name IN ('x''y.pdf'))"),
    ({"page": {"gte": 2, "lte": 5}}, "(page_end >= 2 AND page_start <= 5)"),
    ({"page": 3}, "(page_start <= 3 AND page_end >= 3)"),
    ({"chunk_index": {"lt": 10}}, "(chunk_index < 10)"),
    ({"block_type": ["table", "code"]}, "(block_type IN ('table', 'code'))"),
    ({"file_type": ".PDF"}, "(lower(document_name) LIKE '%.pdf')"),
    ({"page": {"gte": 1}, "block_type": "table"},
     "(block_type IN ('table')) AND (page_end >= 1)"),
])
def test_compiles(filters: Any, sql: str | None) -> None:
    assert compile_filters(filters) == sql


@pytest.mark.parametrize("filters, fragment", [
    ([], "JSON object"),
    ({"author": "x"}, "unknown filter field 'author'"),
    ({"document_name": ""}, "non-empty strings"),
    ({"document_name": 5}, "non-empty strings"),
    ({"document_name": []}, "between 1 and"),
    ({"document_name": {"like": "%"}}, "'in'"),
    ({"page": {"gte": -1}}, "integers between 0"),
    ({"page": {"gte": "1; DROP"}}, "integers between 0"),
    ({"page": {"near": 1}}, "unknown operator"),
    ({"page": True}, "integers between 0"),
    ({"page": "3"}, "integer or an object"),
    ({"block_type": "image"}, "unknown block type"),
    ({"file_type": "pdf' OR 1=1 --"}, "short extensions"),
    ({"document_id": "a\x00b"}, "non-empty strings"),
    ({"chunk_index": {"lte": 2**40}}, "integers between 0"),
])
def test_rejects(filters: Any, fragment: str) -> None:
    with pytest.raises(FilterError, match=fragment):
        compile_filters(filters)


@given(st.text(max_size=50))
def test_any_string_value_is_quoted_into_one_literal(value: str) -> None:
    try:
        sql = compile_filters({"document_name": value})
    except FilterError:
        return
    assert sql is not None
    inner = sql[len("(document_name IN ('"):-len("'))")]
    assert inner.replace("''", "") .count("'") == 0


@pytest.mark.parametrize("query, expected", [
    ('what does "ack_delay" mean?', "what does ack_delay mean"),
    ("title:foo AND (bar OR -baz) +qux", "title foo and bar or baz qux"),
    ('"""', ""),
    ("Ünïcödé  word word", "ünïcödé word"),
])
def test_fts_sanitizer(query: str, expected: str) -> None:
    assert sanitize_fts_query(query) == expected


@given(st.text(max_size=300))
def test_fts_sanitizer_output_is_only_words(query: str) -> None:
    out = sanitize_fts_query(query)
    assert all(token.replace("_", "").isalnum() or token.isalnum() for token in out.split())
    assert '"' not in out and ":" not in out
