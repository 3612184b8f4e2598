"""Chat options: snake_case and camelCase, normalised once, only what the client sent."""

from __future__ import annotations

import pytest

from backend.options import CHAT_OPTIONS, normalize_options
from common.errors import ApiError
from common.options import snake_case


@pytest.mark.parametrize(("camel", "snake"), [
    ("retrievalK", "retrieval_k"), ("forceRag", "force_rag"), ("contextWindowSize", "context_window_size"),
    ("aiRerank", "ai_rerank"), ("queryDecompose", "query_decompose"), ("rerankerTopK", "reranker_top_k"),
    ("retrieval_k", "retrieval_k"), ("verify", "verify"), ("model", "model"),
])
def test_snake_case(camel: str, snake: str) -> None:
    assert snake_case(camel) == snake


def test_camel_and_snake_give_the_same_options() -> None:
    camel = {"retrievalK": 5, "forceRag": True, "contextExpand": False, "contextWindowSize": 2,
             "rerankerTopK": 4, "aiRerank": True, "queryDecompose": False, "retrievalMode": "fts_only",
             "filters": {"document_name": "a.pdf"}, "model": "m", "backend": "extractive", "verify": True,
             "task": "compare", "documents": ["a.pdf", "b.pdf"], "provencePrune": True, "composeSubAnswers": False}
    snake = {snake_case(k): v for k, v in camel.items()}
    assert normalize_options(camel) == normalize_options(snake) == snake
    assert set(snake) == set(CHAT_OPTIONS)


def test_only_sent_options_are_forwarded() -> None:
    assert normalize_options({"message": "hi"}) == {}
    assert normalize_options({"message": "hi", "retrievalK": 3}) == {"retrieval_k": 3}
    assert normalize_options({"verify": None, "model": None}) == {}


def test_false_and_zero_are_sent_values() -> None:
    assert normalize_options({"forceRag": False, "contextWindowSize": 0}) == {"force_rag": False,
                                                                              "context_window_size": 0}


def test_unknown_keys_are_ignored() -> None:
    assert normalize_options({"message": "x", "someFutureOption": True, "session_id": "s"}) == {}
    # localGPT's composeSubAnswers is no longer dropped (issue 20): the RAG API answers it with a warning
    assert normalize_options({"message": "x", "composeSubAnswers": True}) == {"compose_sub_answers": True}


def test_localgpt_search_type_alias() -> None:
    assert normalize_options({"search_type": "hybrid"}) == {"retrieval_mode": "hybrid"}
    assert normalize_options({"searchType": "vector_only"}) == {"retrieval_mode": "vector_only"}


def test_same_option_twice_agreeing_is_fine() -> None:
    assert normalize_options({"retrieval_k": 4, "retrievalK": 4}) == {"retrieval_k": 4}


def test_same_option_twice_disagreeing_is_400() -> None:
    with pytest.raises(ApiError) as err:
        normalize_options({"retrieval_k": 4, "retrievalK": 5})
    assert err.value.status == 400 and err.value.code == "conflicting_option"


@pytest.mark.parametrize("body", [
    {"retrievalK": "5"}, {"retrieval_k": True}, {"forceRag": "yes"}, {"force_rag": 1}, {"filters": []},
    {"filters": "page=2"}, {"model": 3}, {"retrieval_mode": "magic"}, {"retrieval_k": 0},
    {"reranker_top_k": 100000}, {"context_window_size": -1}, {"verify": "false"},
])
def test_invalid_values_are_400(body: dict) -> None:
    with pytest.raises(ApiError) as err:
        normalize_options(body)
    assert err.value.status == 400
