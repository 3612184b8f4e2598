"""One option table, both services running: the same bad chat option or filter is refused alike, before anything
is stored.

The same values go to the gateway's `POST /sessions/<id>/messages` and to the RAG API's `/chat`;
both answer with the same status, code and message, and the session's history is unchanged after
the gateway's refusal (a question stored before the RAG API refused it would stay without answer).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from common.options import MAX_QUERY_CHARS
from testkit.processes import GatewayProcess, RagApiProcess, linked_services

pytestmark = pytest.mark.slow

#: Values each service checked differently (or the gateway not at all) when each had its own copy.
BAD = (
    {"reranker_top_k": 500}, {"rerankerTopK": 101}, {"context_window_size": 15}, {"contextWindowSize": -1},
    {"retrieval_k": 0}, {"retrieval_k": "5"}, {"retrieval_mode": "semantic"}, {"search_type": 7},
    {"backend": "gpt-17"}, {"task": "translate"}, {"task": "summary", "documents": ["a.pdf", "b.pdf"]},
    {"ai_rerank": "yes"}, {"filters": ["document_name"]}, {"model": ""}, {"verify": 1},
    {"retrieval_k": 4, "retrievalK": 5}, {"search_type": "fts_only", "retrieval_mode": "hybrid"},
    # the filter grammar (common/filters.py): the gateway checked only that filters was an object
    {"filters": {"author": "x"}}, {"filters": {"document_name": []}}, {"filters": {"document_name": {"like": "%"}}},
    {"filters": {"page": {"gte": -1}}}, {"filters": {"page": {"near": 1}}}, {"filters": {"page": "3"}},
    {"filters": {"block_type": "image"}}, {"filters": {"file_type": "pdf' OR 1=1 --"}},
    {"filters": {"chunk_index": {"lte": 2**40}}}, {"filters": {"document_id": ["ok", 7]}},
)


@pytest.fixture(scope="module")
def services(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[GatewayProcess, RagApiProcess]]:
    with linked_services(tmp_path_factory.mktemp("options") / "data") as both:
        yield both


@pytest.mark.parametrize("options", BAD, ids=[str(b)[:50] for b in BAD])
def test_a_bad_option_is_refused_alike_and_stores_nothing(services: tuple[GatewayProcess, RagApiProcess],
                                                          options: dict[str, Any]) -> None:
    gateway, rag = services
    gw = gateway.client
    sid = gw.post("/sessions", {"title": "options"}).json["session_id"]
    before = gw.get(f"/sessions/{sid}").json
    refused = gw.post(f"/sessions/{sid}/messages", {"message": "How many kilowatts?", **options})
    direct = rag.client.post("/chat", {"query": "How many kilowatts?", **options})
    assert refused.status == direct.status == 400, (refused.body, direct.body)
    assert refused.json["code"] == direct.json["code"], (refused.json, direct.json)
    assert refused.json["message"] == direct.json["message"] == refused.json["error"]
    after = gw.get(f"/sessions/{sid}").json
    assert after["messages"] == before["messages"] == []
    assert after["session"]["message_count"] == before["session"]["message_count"] == 0


def test_both_spellings_with_one_value_are_accepted_by_both(services: tuple[GatewayProcess, RagApiProcess]) -> None:
    gateway, rag = services
    body = {"retrieval_k": 4, "retrievalK": 4, "search_type": "hybrid", "retrieval_mode": "hybrid"}
    sid = gateway.client.post("/sessions", {}).json["session_id"]
    answered = gateway.client.post(f"/sessions/{sid}/messages", {"message": "hello", **body})
    assert answered.status == 200, answered.body
    assert rag.client.post("/chat", {"query": "hello", **body}).status == 200
    assert len(gateway.client.get(f"/sessions/{sid}").json["messages"]) == 2


def test_a_question_the_rag_api_would_refuse_as_too_long_is_not_stored(
        services: tuple[GatewayProcess, RagApiProcess]) -> None:
    gateway, rag = services
    sid = gateway.client.post("/sessions", {}).json["session_id"]
    question = "How many kilowatts? " + "x" * MAX_QUERY_CHARS
    assert rag.client.post("/chat", {"query": question}).status == 400
    refused = gateway.client.post(f"/sessions/{sid}/messages", {"message": question})
    assert refused.status == 400 and str(MAX_QUERY_CHARS) in refused.json["message"]
    assert gateway.client.get(f"/sessions/{sid}").json["messages"] == []
