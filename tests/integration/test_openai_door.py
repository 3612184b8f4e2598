"""The gateway's OpenAI-compatible door, driven by the official `openai` client and by curl.

Both services run with a token (the door uses the gateway's bearer auth) and the extractive
backend, so the answer is a checked, cited quote: `[n]` in the text, the citations in the
completion's `docent` extension field, streamed or not.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections.abc import Iterator

import pytest

from testkit.processes import GatewayProcess, RagApiProcess, free_port
from testkit.stack import MODEL_ENV

pytestmark = pytest.mark.slow

TOKEN = "openai-door-token-7d1e"
POLICY = "# Leave policy\n\nEmployees accrue 25 days of annual leave per year.\n"
QUESTION = "How many days of annual leave do employees accrue?"


@pytest.fixture(scope="module")
def door(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GatewayProcess]:
    data = tmp_path_factory.mktemp("door") / "data"
    gw_port, rag_port = free_port(), free_port()
    gateway = GatewayProcess(data, port=gw_port, rag_url=f"http://127.0.0.1:{rag_port}", token=TOKEN)
    # extractive by default; the packaged model answers a request that asks for `backend: llamacpp`
    rag = RagApiProcess(data, rag_port, gateway_url=f"http://127.0.0.1:{gw_port}", token=TOKEN, **MODEL_ENV)
    gateway.start(wait_s=30)
    try:
        rag.start(wait_s=240)
        gw = gateway.client
        iid = gw.post("/indexes", {"name": "Handbook"}).json["index_id"]
        assert gw.upload(f"/indexes/{iid}/upload", [("policy.md", POLICY.encode())]).status == 200
        assert gw.post(f"/indexes/{iid}/build", {"wait": True}).json["status"] == "ready"
        yield gateway
    finally:
        rag.stop()
        gateway.stop()


@pytest.fixture()
def client(door: GatewayProcess):  # type: ignore[no-untyped-def]
    from openai import OpenAI

    return OpenAI(base_url=f"{door.url}/v1", api_key=TOKEN, max_retries=0, timeout=120)


def test_models_list_the_indexes(client) -> None:  # type: ignore[no-untyped-def]
    ids = [m.id for m in client.models.list()]
    assert "docent" in ids and "docent/Handbook" in ids


def test_a_completion_is_the_checked_cited_answer(client) -> None:  # type: ignore[no-untyped-def]
    done = client.chat.completions.create(model="docent/Handbook", messages=[
        {"role": "system", "content": "Be brief."}, {"role": "user", "content": QUESTION}])
    text = done.choices[0].message.content
    assert "25 days" in text and "[1]" in text and done.choices[0].finish_reason == "stop"
    # the text ends with the sources a person can follow; the same as annotations a program can
    assert text.endswith("\n\nSources:\n[1] policy.md")
    notes = done.choices[0].message.annotations
    assert notes and notes[0].type == "url_citation"
    marker = notes[0].url_citation
    assert text[marker.start_index:marker.end_index] == "[1]" and marker.title == "policy.md"
    assert marker.url.startswith("http://127.0.0.1:") and marker.url.endswith("/file")
    ext = done.model_extra["docent"]
    assert ext["sources"][0]["n"] == 1 and ext["sources"][0]["url"] == marker.url
    assert ext["citations"][0]["n"] == 1 and ext["citations"][0]["document_name"] == "policy.md"
    assert ext["answer_source"] in ("extractive", "llm", "llm_repaired")
    assert any("system messages are not used" in w for w in ext["warnings"])


def test_a_streamed_completion_ends_with_its_citations(client) -> None:  # type: ignore[no-untyped-def]
    chunks = list(client.chat.completions.create(model="docent/handbook", stream=True,
                                                 messages=[{"role": "user", "content": QUESTION}]))
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert "25 days" in text and "[1]" in text and text.endswith("\n\nSources:\n[1] policy.md")
    listed = [c for c in chunks if c.choices and (c.choices[0].delta.model_extra or {}).get("annotations")]
    assert len(listed) == 1, "the sources chunk carries the annotations"
    note = listed[0].choices[0].delta.model_extra["annotations"][0]["url_citation"]
    assert text[note["start_index"]:note["end_index"]] == "[1]" and note["title"] == "policy.md"
    last = chunks[-1]
    assert last.choices[0].finish_reason == "stop"
    assert last.model_extra["docent"]["citations"][0]["document_name"] == "policy.md"


def test_a_model_answer_streams_as_it_is_written(client) -> None:  # type: ignore[no-untyped-def]
    """With a model answering, the deltas are its tokens, sent as the RAG API produces them: several
    content chunks, the first of them received before the stream's final chunk (compared by order of
    arrival, not by a time limit), and the checked answer in `docent.answer` at the end."""
    import importlib.util

    from rag_system.generation.models import CATALOG, ModelNotFoundError, part_paths

    try:
        part_paths(CATALOG[MODEL_ENV["LLM_GGUF"]])
    except ModelNotFoundError:
        pytest.skip("the packaged model is not installed")
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python is not installed")
    arrivals: list[tuple[float, object]] = []
    for chunk in client.chat.completions.create(model="docent/Handbook", stream=True,
                                                messages=[{"role": "user", "content": QUESTION}],
                                                extra_body={"backend": "llamacpp"}):
        arrivals.append((time.monotonic(), chunk))
    last = arrivals[-1][1]
    ext = last.model_extra["docent"]  # type: ignore[attr-defined]
    assert ext.get("backend") == "llamacpp", ext  # the model was asked for (Docent's `backend` extension)
    content = [(t, c) for t, c in arrivals if c.choices and c.choices[0].delta.content]  # type: ignore[attr-defined]
    assert len(content) >= 2, [c.choices[0].delta.content for _, c in content]  # type: ignore[attr-defined]
    assert content[0][0] < arrivals[-1][0] and arrivals.index(content[0]) < len(arrivals) - 1
    assert last.choices[0].finish_reason == "stop"  # type: ignore[attr-defined]
    text = "".join(c.choices[0].delta.content for _, c in content)  # type: ignore[attr-defined]
    text = text.split("\n\nSources:\n")[0] if ext["citations"] else text  # the sources list follows the answer
    assert ext["answer"] and ext["answer"] in text  # the checked answer is what the stream ends with
    assert bool(ext.get("streamed_draft_replaced")) == (" ".join(text.split()) != " ".join(ext["answer"].split()))
    print(f"\nopenai stream: {len(content)} content chunks; first after {content[0][0] - arrivals[0][0]:.2f} s, "
          f"last chunk after {arrivals[-1][0] - arrivals[0][0]:.2f} s; source {ext['answer_source']}")


def test_general_chat_and_unknown_models(client) -> None:  # type: ignore[no-untyped-def]
    from openai import AuthenticationError, NotFoundError, OpenAI

    plain = client.chat.completions.create(model="docent", messages=[{"role": "user", "content": "hello"}])
    assert plain.choices[0].message.content and plain.model_extra["docent"]["citations"] == []
    with pytest.raises(NotFoundError) as missing:
        client.chat.completions.create(model="docent/nope", messages=[{"role": "user", "content": "x"}])
    assert "no index named" in str(missing.value)
    with pytest.raises(AuthenticationError):
        OpenAI(base_url=str(client.base_url), api_key="wrong", max_retries=0).models.list()


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_curl_streams_and_answers(door: GatewayProcess) -> None:
    body = json.dumps({"model": "docent/Handbook", "messages": [{"role": "user", "content": QUESTION}]})
    base = ["curl", "-sS", "--max-time", "120", "-H", f"Authorization: Bearer {TOKEN}",
            "-H", "Content-Type: application/json", f"{door.url}/v1/chat/completions"]
    plain = json.loads(subprocess.run([*base, "-d", body], capture_output=True, text=True, check=True).stdout)
    assert "25 days" in plain["choices"][0]["message"]["content"] and plain["docent"]["citations"]
    stream = json.dumps({**json.loads(body), "stream": True})
    out = subprocess.run([*base, "-N", "-d", stream], capture_output=True, text=True, check=True).stdout
    frames = [line[6:] for line in out.splitlines() if line.startswith("data: ")]
    assert frames[-1] == "[DONE]"
    content = "".join(json.loads(f)["choices"][0]["delta"].get("content") or "" for f in frames[:-1])
    assert "25 days" in content
    denied = subprocess.run(["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", f"{door.url}/v1/models"],
                            capture_output=True, text=True, check=True).stdout
    assert denied == "401"
