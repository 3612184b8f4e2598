"""Answers over a real index: extractive and embedded-LLM backends, events, refusal, cache, memory."""

from __future__ import annotations


import pytest

from rag_system.agent.pipeline import QueryPipeline
from rag_system.generation.registry import BackendRegistry
from rag_system.indexing.builder import build_index
from rag_system.retrieval.engine import RetrievalEngine
from testkit.docs import ANSWER_DOCS as DOCS
from testkit.docs import ANSWER_QUESTION as QUESTION


@pytest.fixture(scope="module")
def built(tmp_path_factory, embedder):  # type: ignore[no-untyped-def]
    from rag_system.config import load_settings

    root = tmp_path_factory.mktemp("answering")
    folder = root / "docs"
    folder.mkdir()
    for name, text in DOCS.items():
        (folder / name).write_text(text)
    settings = load_settings(environ={"DOCENT_DATA_DIR": str(root / "data"),
                                      "OLLAMA_HOST": "http://127.0.0.1:9"}, dotenv_path=None)
    build_index([folder], "a", settings, embedder=embedder)
    return settings, RetrievalEngine(settings, embedder)


def pipeline_for(built) -> QueryPipeline:  # type: ignore[no-untyped-def]
    settings, engine = built
    return QueryPipeline(settings, engine, BackendRegistry(settings))


def ask(pipe: QueryPipeline, query: str, **options):  # type: ignore[no-untyped-def]
    events: list[tuple[str, dict]] = []
    response = pipe.run(pipe.request(query, ["a"], **options), lambda e, d: events.append((e, d)))
    return response.to_json(), events


def cited_texts(payload: dict) -> list[str]:
    by_n = {s["n"]: s["text"] for s in payload["source_documents"]}
    return [by_n[c["n"]] for c in payload["citations"]]


def test_extractive_answer_cites_the_block_with_the_fact(built):
    payload, events = ask(pipeline_for(built), QUESTION, backend="extractive")
    assert payload["answer_source"] == "extractive" and payload["validation"]["valid"]
    assert any("default value of 3" in t for t in cited_texts(payload))
    c = payload["citations"][0]
    assert c["document_name"] == "quic-transport.txt" and c["page_start"] == 1 and c["quote"]
    names = [e for e, _ in events]
    assert names[:3] == ["analyze", "retrieval_started", "retrieval_done"]
    assert names[-1] == "complete" and names.count("complete") == 1
    assert set(payload) >= {"answer", "answer_source", "citations", "source_documents", "token_usage", "timings_ms"}


def test_unrelated_question_is_refused(built):
    payload, events = ask(pipeline_for(built), "What is the capital of Mongolia?", backend="extractive")
    assert payload["answer_source"] == "refusal" and payload["citations"] == []
    assert "mongolia" in payload["refusal_reason"].lower()  # the name as the question wrote it
    assert "refusal" in [e for e, _ in events]


def test_smalltalk_is_answered_directly_without_retrieval(built):
    payload, events = ask(pipeline_for(built), "hello!", backend="extractive")
    names = [e for e, _ in events]
    assert payload["route"] == "direct" and payload["answer_source"] == "direct"
    assert names == ["analyze", "direct_answer", "complete"]


def test_force_rag_overrides_triage(built):
    payload, events = ask(pipeline_for(built), "hello", backend="extractive", force_rag=True)
    assert "retrieval_started" in [e for e, _ in events]


def test_compound_question_is_decomposed_and_both_facts_are_found(built):
    payload, events = ask(pipeline_for(built), "How much annual leave do employees accrue and how often "
                          "should hydrangeas be watered?", backend="extractive")
    decomposition = [d for e, d in events if e == "decomposition"]
    assert decomposition and len(decomposition[0]["sub_queries"]) == 2
    names = {s["document_name"] for s in payload["source_documents"]}
    assert {"leave-policy.txt", "garden.md"} <= names


def test_session_cache_hits_only_within_the_session(built):
    pipe = pipeline_for(built)
    first, _ = ask(pipe, QUESTION, backend="extractive", session_id="s1")
    again, events = ask(pipe, QUESTION + "  ", backend="extractive", session_id="s1")
    other, _ = ask(pipe, QUESTION, backend="extractive", session_id="s2")
    assert not first["cached"] and again["cached"] and not other["cached"]
    assert [e for e, _ in events][-2:] == ["cache_hit", "complete"]
    assert again["answer"] == first["answer"]


def test_follow_up_question_is_resolved_against_the_history_it_carries(built):
    from rag_system.agent.types import Turn

    pipe = pipeline_for(built)
    question = "How much annual leave do employees accrue?"
    first, _ = ask(pipe, question, backend="extractive", session_id="f1")
    history = (Turn("user", question), Turn("assistant", first["answer"]))
    payload, _ = ask(pipe, "What about sick leave?", backend="extractive", session_id="f1", history=history)
    assert payload["standalone_query"] and "sick leave" in payload["standalone_query"].lower()
    assert payload["source_documents"][0]["document_name"] == "leave-policy.txt"


def test_unknown_backend_is_rejected(built):
    from rag_system.generation.registry import UnknownBackendError

    with pytest.raises(UnknownBackendError):
        ask(pipeline_for(built), QUESTION, backend="gpt-17")


@pytest.mark.slow
def test_embedded_llm_answers_with_valid_citations(built):
    payload, events = ask(pipeline_for(built), QUESTION, backend="llamacpp")
    assert payload["backend"] in ("llamacpp", "extractive")
    assert payload["answer_source"] in ("llm", "llm_repaired", "extractive")
    assert payload["validation"]["valid"]
    assert any("default value of 3" in t for t in cited_texts(payload))
    if payload["backend"] == "llamacpp":
        assert "token" in [e for e, _ in events]
        assert payload["token_usage"]["total"]["prompt"] > 100
        assert payload["model"].startswith("qwen2.5")
