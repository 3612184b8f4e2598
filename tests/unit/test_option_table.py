"""The one option table: both services refuse the same values alike, it fills the typed request, the docs say it.

Each bad value is derived from the table itself (one past each end of a range, a wrong JSON type, a
name that is not a choice), so a row added to the table is checked here without a new case.
"""

from __future__ import annotations

import re
from dataclasses import fields
from typing import Any

import pytest

from backend.build_options import read_build_options
from backend.handlers_chat import turn_id_of
from backend.options import normalize_options
from common.errors import ApiError
from common.options import CHAT, CHUNK_SIZE, MAX_TOKENS, Option
from rag_system.agent.pipeline import _RETRIEVAL_KEYS, ChatRequest
from rag_system.api.options import PipelineOptions, parse_chat, parse_index, parse_retrieve
from testkit import REPO_ROOT

_WRONG_TYPE: dict[type, Any] = {bool: "yes", int: "5", str: 7, dict: ["document_name"], list: "a.pdf"}


def bad_values(option: Option) -> list[Any]:
    values = [_WRONG_TYPE[option.kind], 1 if option.kind is bool else True]
    if option.kind is int and option.low is not None and option.high is not None:
        values += [option.low - 1, option.high + 1, option.high + 0.5]
    if option.choices:
        values += ["nope", option.choices[0].upper()]
    if option.kind is str and option.high is not None:
        values += ["", "  ", "x" * (option.high + 1)]
    return values


def refusal(read: Any, body: dict[str, Any]) -> tuple[int, str, str]:
    with pytest.raises(ApiError) as info:
        read(body)
    return info.value.status, info.value.code, info.value.message


BAD_CHAT = [pytest.param({o.name: v}, id=f"{o.name}={v!r}"[:60]) for o in CHAT for v in bad_values(o)] + [
    pytest.param(body, id=str(body)[:60]) for body in (
        {"retrieval_k": 4, "retrievalK": 5}, {"search_type": "fts_only", "retrieval_mode": "hybrid"},
        {"searchType": "fts_only", "retrievalMode": "hybrid"}, {"task": "summary", "documents": ["a", "b"]},
        {"task": "compare", "documents": ["a"]}, {"documents": ["a"]}, {"task": "auto", "documents": [""]})]


@pytest.mark.parametrize("options", BAD_CHAT)
def test_the_gateway_and_the_rag_api_refuse_a_chat_option_alike(options: dict[str, Any]) -> None:
    gateway = refusal(normalize_options, {"message": "q", **options})
    assert gateway == refusal(parse_chat, {"query": "q", **options})
    assert gateway[0] == 400 and gateway[1] in ("invalid_option", "conflicting_option", "invalid_retrieval_mode",
                                                "invalid_backend", "invalid_task", "invalid_filters")


#: Every shape the filter grammar (common/filters.py) refuses: each field, each way a value can be wrong.
BAD_FILTERS = (
    [], "page = 1", 5, {"author": "x"}, {"Document_Name": "a.pdf"}, {"document_name": ""}, {"document_name": 5},
    {"document_name": None}, {"document_name": []}, {"document_name": ["a.pdf", 7]},
    {"document_name": ["x"] * 1001}, {"document_name": "x" * 1025}, {"document_id": "a\x00b"},
    {"document_name": {"like": "%"}}, {"document_name": {"in": "a.pdf"}}, {"document_name": {"eq": "a", "in": ["b"]}},
    {"document_id": {}}, {"block_type": "image"}, {"block_type": ["table", "figure"]}, {"file_type": "pdf' OR 1=1 --"},
    {"file_type": ".toolongextension"}, {"file_type": ""}, {"page": {"gte": -1}}, {"page": {"gte": "1; DROP"}},
    {"page": {"near": 1}}, {"page": True}, {"page": "3"}, {"page": {}}, {"page": [1, 2]}, {"page": {"lte": 2.5}},
    {"chunk_index": {"lte": 2**40}}, {"chunk_index": -3}, {"page": 2, "colour": "red"},
)


@pytest.mark.parametrize("filters", BAD_FILTERS, ids=[repr(f)[:50] for f in BAD_FILTERS])
def test_the_gateway_and_the_rag_api_refuse_a_filter_alike(filters: Any) -> None:
    gateway = refusal(normalize_options, {"message": "q", "filters": filters})
    assert gateway == refusal(parse_chat, {"query": "q", "filters": filters})
    assert gateway == refusal(parse_retrieve, {"query": "q", "index": "kb", "filters": filters})
    assert gateway[:2] == (400, "invalid_filters")
    assert gateway[2].startswith(("invalid filters: ", "filters must be an object")), gateway


def test_good_filters_pass_both_services_as_sent() -> None:
    filters = {"document_name": {"in": ["a.pdf"]}, "page": {"gte": 2, "lte": 5}, "file_type": ".PDF",
               "block_type": ["table"], "document_id": "ab", "chunk_index": 3}
    assert normalize_options({"filters": filters}) == {"filters": filters}
    assert parse_chat({"query": "q", "filters": filters}).pipeline == {"filters": filters}


@pytest.mark.parametrize("size", bad_values(CHUNK_SIZE))
def test_the_gateway_and_the_rag_api_refuse_a_chunk_size_alike(size: Any) -> None:
    assert refusal(read_build_options, {"chunkSize": size}) == \
        refusal(parse_index, {"index": "kb", "paths": ["/x"], "chunk_size": size})


def test_the_same_value_in_both_spellings_is_accepted_by_both() -> None:
    body = {"retrieval_k": 4, "retrievalK": 4, "search_type": "fts_only", "retrieval_mode": "fts_only"}
    assert normalize_options(body) == {"retrieval_k": 4, "retrieval_mode": "fts_only"}
    assert parse_chat({"query": "q", **body}).pipeline == {"k": 4, "mode": "fts_only"}


def test_every_target_is_a_field_the_pipeline_takes() -> None:
    """A typed request, so no option can reach `QueryPipeline.request` as a keyword it does not take."""
    typed = {f.name for f in fields(PipelineOptions)}
    assert {o.target for o in (*CHAT, MAX_TOKENS) if o.target} <= typed
    assert typed <= {f.name for f in fields(ChatRequest)} | _RETRIEVAL_KEYS


def _documented(doc: str, section: str) -> dict[str, tuple[str, str]]:
    """`name` -> (what the first column adds, the type/range column) of a section's option table."""
    text = doc[doc.index(section):]
    text = text[:text.index("\n### ", 1)]
    rows = re.findall(r"^\| `(\w+)`( \(alias `\w+`\))? \| ((?:[^|\\]|\\\|)*)\|", text, flags=re.M)
    return {name: (alias, column.strip()) for name, alias, column in rows}


def _expected(option: Option) -> str:
    if option.kind is int:
        return f"{option.low}-{option.high}"
    return {bool: "bool", dict: "object", list: "list of strings", str: "string"}[option.kind]


def test_the_documented_ranges_are_the_table() -> None:
    doc = (REPO_ROOT / "Documentation" / "api.md").read_text()
    rows = _documented(doc, "### `POST /chat` and `POST /chat/stream`")
    for option in (*CHAT, MAX_TOKENS):
        assert option.name in rows, f"{option.name} is not in api.md's /chat table"
        alias, column = rows[option.name]
        assert alias == "".join(f" (alias `{a}`)" for a in option.aliases), option.name
        if option.choices:
            assert set(re.findall(r"`(\w+)`", column)) == set(option.choices), option.name
        else:
            assert column == _expected(option), option.name
    low, high = CHUNK_SIZE.low, CHUNK_SIZE.high
    assert f"`chunk_size` (optional, {low}-{high})" in doc
    assert f"`chunkSize` is applied ({low}-{high}," in (REPO_ROOT / "Documentation" / "api-gateway.md").read_text()


@pytest.mark.parametrize("turn_id", ["_x", "-x", "a.b", "a:b", "", "x" * 129, "a b"])
def test_a_turn_id_the_rag_api_refuses_is_refused_by_the_gateway_before_it_stores_it(turn_id: str) -> None:
    with pytest.raises(ApiError):
        turn_id_of({"turn_id": turn_id}, required=True)
    if turn_id[:1] in ("_", "-", ""):  # the RAG API refuses these too ('.' and ':' it takes, the gateway never did)
        assert refusal(parse_chat, {"query": "q", "turn_id": turn_id})[:2] == (400, "invalid_option")
    assert turn_id_of({"turn_id": "a_b-9"}, required=True) == "a_b-9"
