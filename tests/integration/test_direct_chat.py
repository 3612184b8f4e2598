"""General chat with a generative backend and a history (rag_system/agent/direct.py), over real HTTP.

The RAG API's `openai` backend talks to a scripted OpenAI-compatible server (testkit/scripted_llm.py),
so the direct path reads the conversation as it does with a real model: "thanks!" after a question
must be answered by the model with the earlier turns in its prompt, never an internal error.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from testkit.scripted_llm import ScriptedLLM
from tests.integration.api_support import Api, api_settings, build, running_api, write_docs

REPLY = "You're welcome, glad it helped."
HISTORY = [{"role": "user", "content": "How much annual leave do employees accrue?"},
           {"role": "assistant", "content": "Employees accrue 25 days of annual leave per year [1]."}]


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[tuple[Api, ScriptedLLM]]:
    root = tmp_path_factory.mktemp("direct-chat")
    with ScriptedLLM(REPLY) as llm:
        settings = api_settings(root / "data", LLM_BACKEND="openai", **llm.rag_env())
        with running_api(settings, embedder) as api:
            job, _ = build(api, "kb", [str(write_docs(api.uploads / "docs"))])
            assert job["state"] == "done"
            yield api, llm


def _sent(llm: ScriptedLLM) -> list[dict[str, Any]]:
    return llm.requests[-1]["messages"]


@pytest.mark.parametrize("index", [None, "kb"])
def test_small_talk_after_a_question_is_answered_by_the_model_with_the_history(env, index) -> None:  # type: ignore[no-untyped-def]
    api, llm = env
    body = {"query": "thanks!", "backend": "openai", "conversation_history": HISTORY,
            **({"index": index} if index else {})}
    status, _, answer = api.call("POST", "/chat", body)
    assert status == 200, answer
    assert answer["answer_source"] == "direct" and answer["answer"] == REPLY and answer["citations"] == []
    sent = _sent(llm)
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
    assert sent[1]["content"] == HISTORY[0]["content"] and sent[2]["content"] == HISTORY[1]["content"]
    assert sent[-1]["content"] == "thanks!"


def test_a_streamed_direct_reply_with_history_ends_complete(env) -> None:  # type: ignore[no-untyped-def]
    api, llm = env
    events = api.stream("/chat/stream", {"query": "hello there", "backend": "openai",
                                         "conversation_history": HISTORY})
    kinds = [kind for kind, _ in events]
    assert kinds[-1] == "complete", events[-1]
    assert "".join(data["text"] for kind, data in events if kind == "token") == REPLY
    assert events[-1][1]["answer_source"] == "direct"
    assert any(m["content"] == HISTORY[1]["content"] for m in _sent(llm))
