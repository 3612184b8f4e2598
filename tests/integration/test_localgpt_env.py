"""A migrated localGPT `.env` and a localGPT session's model, with both services running.

The RAG API starts with localGPT's names in its environment: `LANCEDB_PATH` puts the tables where
it says (`/health` reports the store there) and start-up logs one warning per name, saying how it
is used or why not. A session made with a model answers with it when a question names none — through
the gateway's `/messages` and through a stream that reads the history from the gateway. The model
is a scripted OpenAI-compatible server (testkit/scripted_llm.py), reached as the `openai` backend.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from testkit.client import read_events
from testkit.processes import GatewayProcess, RagApiProcess, linked_services
from testkit.scripted_llm import ScriptedLLM

pytestmark = pytest.mark.slow

REPLY = "Hello from the session's model."


@pytest.fixture(scope="module")
def services(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, GatewayProcess, RagApiProcess]]:
    root = tmp_path_factory.mktemp("localgpt-env")
    with ScriptedLLM(REPLY) as llm:
        env = {"LANCEDB_PATH": str(root / "localgpt-lancedb"), "ENRICHMENT_MODEL": "qwen3:0.6b",
               "RAG_CONFIG_MODE": "react", **llm.rag_env()}
        with linked_services(root / "data", **env) as (gateway, rag):
            yield root, gateway, rag


def test_localgpt_names_are_honoured_or_named_at_start_up(services) -> None:  # type: ignore[no-untyped-def]
    root, _, rag = services
    assert rag.client.get("/health").json["components"]["store"]["uri"] == str(root / "localgpt-lancedb")
    log = rag.log()
    assert f"LANCEDB_PATH (localGPT) is used as LANCEDB_URI='{root / 'localgpt-lancedb'}'" in log
    assert "ENRICHMENT_MODEL (localGPT) is ignored: Docent does not rewrite chunks" in log
    assert "RAG_CONFIG_MODE='react' (localGPT) is ignored" in log


def test_a_sessions_model_answers_its_questions(services) -> None:  # type: ignore[no-untyped-def]
    _, gateway, rag = services
    gw = gateway.client
    plain = gw.post("/sessions", {"title": "no model"}).json["session_id"]
    assert gw.post(f"/sessions/{plain}/messages", {"message": "hello"}).json["result"]["backend"] != "openai"
    sid = gw.post("/sessions", {"title": "localGPT chat", "model": "openai"}).json["session_id"]
    reply = gw.post(f"/sessions/{sid}/messages", {"message": "hello"}).json
    assert reply["response"] == REPLY and reply["result"]["backend"] == "openai"
    asked = gw.post(f"/sessions/{sid}/messages", {"message": "hello again", "backend": "extractive"}).json
    assert asked["result"]["backend"] != "openai"  # a question that names its backend keeps it
    # streamed straight from the RAG API, which reads the session (history and model) from the gateway
    conn = http.client.HTTPConnection("127.0.0.1", rag.port, timeout=60)
    conn.request("POST", "/chat/stream", json.dumps({"query": "hi there", "session_id": sid}),
                 {"Content-Type": "application/json"})
    resp = conn.getresponse()
    events = list(read_events(resp))
    conn.close()
    assert events[-1][0] == "complete" and events[-1][1]["backend"] == "openai" and events[-1][1]["answer"] == REPLY
