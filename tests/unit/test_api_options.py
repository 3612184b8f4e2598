"""Request option normalisation: localGPT names in snake or camel case -> pipeline options."""

from __future__ import annotations

import pytest

from common.errors import ApiError
from common.options import snake_case as snake
from rag_system.api.options import normalise_keys, parse_chat, parse_index, parse_retrieve


def code_of(body, parse=parse_chat) -> str:  # type: ignore[no-untyped-def]
    with pytest.raises(ApiError) as info:
        parse(body)
    assert info.value.status == 400
    return info.value.code


@pytest.mark.parametrize("camel, expected", [
    ("rerankerTopK", "reranker_top_k"), ("retrievalK", "retrieval_k"), ("aiRerank", "ai_rerank"),
    ("contextWindowSize", "context_window_size"), ("tableName", "table_name"), ("sessionId", "session_id"),
    ("query", "query"), ("force_rag", "force_rag"),
])
def test_snake(camel, expected):
    assert snake(camel) == expected


def test_both_spellings_with_different_values_are_a_400_naming_both():
    # Was "snake_case wins"; now the gateway's rule (Documentation/api.md): a doubled spelling is never guessed.
    for body in ({"retrievalK": 5, "retrieval_k": 7}, {"retrieval_k": 7, "retrievalK": 5}):
        with pytest.raises(ApiError) as info:
            normalise_keys(body)
        assert info.value.code == "conflicting_option" and "retrievalK=5" in info.value.message
        assert "retrieval_k=7" in info.value.message
    assert normalise_keys({"retrievalK": 7, "retrieval_k": 7})["retrieval_k"] == 7
    assert normalise_keys({"retrievalK": None, "retrieval_k": 7})["retrieval_k"] == 7
    assert code_of({"query": "q", "search_type": "fts_only", "retrieval_mode": "hybrid"}) == "conflicting_option"


def test_localgpt_options_map_onto_pipeline_options():
    opts = parse_chat({"query": "q", "tableName": "idx1", "sessionId": "s-1", "retrievalMode": "fts_only",
                       "retrieval_k": 12, "rerankerTopK": 4, "aiRerank": True, "contextExpand": True,
                       "contextWindowSize": 2, "queryDecompose": False, "verify": False, "forceRag": True,
                       "filters": {"document_name": "a.pdf"}, "model": "qwen3:8b", "backend": "extractive",
                       "provence_prune": True})
    assert opts.query == "q" and opts.indexes == ("idx1",) and opts.session_id == "s-1"
    assert opts.pipeline == {"mode": "fts_only", "k": 12, "top_k": 4, "answer_top_k": 4, "rerank": True,
                             "context_expand": True, "context_window_size": 2, "query_decompose": False,
                             "verify": False, "force_rag": True, "filters": {"document_name": "a.pdf"},
                             "model": "qwen3:8b", "backend": "extractive",
                             "prune": True}  # localGPT's provence_prune is applied (issue 20), not dropped


def test_omitted_options_are_left_to_the_profile():
    assert parse_chat({"query": "q"}).pipeline == {}
    assert parse_chat({"query": "q", "retrieval_k": None}).pipeline == {}


def test_indexes_are_combined_deduplicated_and_legacy_table_names_accepted():
    opts = parse_chat({"query": "q", "table_name": "text_pages_abc", "index": "abc", "indexes": ["b", "abc"]})
    assert opts.indexes == ("abc", "b")


def test_search_type_is_an_alias_of_retrieval_mode():
    assert parse_chat({"query": "q", "search_type": "vector_only"}).pipeline["mode"] == "vector_only"


@pytest.mark.parametrize("body, code", [
    ({}, "missing_query"),
    ({"query": ""}, "invalid_option"),
    ({"query": 3}, "invalid_option"),
    ({"query": "q", "retrieval_mode": "semantic"}, "invalid_retrieval_mode"),
    ({"query": "q", "retrieval_mode": 1}, "invalid_retrieval_mode"),
    ({"query": "q", "filters": {"nope": 1}}, "invalid_filters"),
    ({"query": "q", "filters": ["document_name"]}, "invalid_filters"),
    ({"query": "q", "filters": {"page": {"between": [1, 2]}}}, "invalid_filters"),
    ({"query": "q", "retrieval_k": "5"}, "invalid_option"),
    ({"query": "q", "retrieval_k": 0}, "invalid_option"),
    ({"query": "q", "retrieval_k": True}, "invalid_option"),
    ({"query": "q", "reranker_top_k": 2.5}, "invalid_option"),
    ({"query": "q", "ai_rerank": "true"}, "invalid_option"),
    ({"query": "q", "context_window_size": 99}, "invalid_option"),
    ({"query": "q", "backend": "gpt"}, "invalid_backend"),
    ({"query": "q", "index": "a b"}, "invalid_index_name"),
    ({"query": "q", "indexes": "a"}, "invalid_option"),
    ({"query": "q", "session_id": "../x"}, "invalid_option"),
    ({"query": "q", "turn_id": "t.1"}, "invalid_option"),  # the gateway would refuse to store it
    ({"query": "q", "turn_id": "t:1"}, "invalid_option"),
    ([1, 2], "invalid_body"),
])
def test_bad_values_are_400_with_a_code(body, code):
    assert code_of(body) == code


def test_retrieve_needs_exactly_one_index():
    assert parse_retrieve({"query": "q", "index": "a", "retrievalK": 3}).retrieval == {"k": 3}
    assert code_of({"query": "q"}, parse_retrieve) == "invalid_option"
    assert code_of({"query": "q", "indexes": ["a", "b"]}, parse_retrieve) == "invalid_option"


def test_index_request_accepts_localgpt_names():
    spec = parse_index({"table_name": "abc", "file_paths": ["/x/a.pdf"]})
    assert spec.index == "abc" and spec.paths == ("/x/a.pdf",)
    assert code_of({"index": "abc", "paths": ["/x"], "retrieval_mode": "bm25"}, parse_index) == "invalid_retrieval_mode"
    assert code_of({"index": "abc", "paths": ["a\x00b"]}, parse_index) == "invalid_paths"


def test_a_backend_given_as_model_picks_that_backend_and_unapplied_options_warn():
    opts = parse_chat({"query": "q", "model": "extractive", "composeSubAnswers": True})
    assert opts.pipeline["backend"] == "extractive" and "model" not in opts.pipeline
    assert any("compose_sub_answers" in w for w in opts.warnings)
    assert parse_chat({"query": "q", "model": "qwen3:8b"}).warnings == ()


def test_a_turn_id_the_gateway_stores_is_taken_and_a_session_id_may_hold_dots():
    opts = parse_chat({"query": "q", "session_id": "s.1:a", "turn_id": "t-1_a"})
    assert (opts.session_id, opts.turn_id) == ("s.1:a", "t-1_a")
