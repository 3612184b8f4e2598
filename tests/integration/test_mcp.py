"""`python -m rag_system mcp` driven by the MCP SDK's own client, against real services.

Over stdio: the tools are listed with their input and output schemas, `ask` returns a checked answer
with a citation (as text and as structured content), `search` passages carry pages and chunk ids, and
a bad index is a tool error after which the server still answers. Over streamable HTTP: no token or a
wrong one is refused before MCP, the service token works.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamablehttp_client

from testkit import REPO_ROOT
from testkit.processes import base_env, free_port
from testkit.stack import SEED_QUESTION, Stack

INDEX_NAME = "Seed index"  # testkit.stack.Stack.make_seed


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    running = Stack(tmp_path_factory.mktemp("mcp")).start()
    try:
        running.make_seed(tmp_path_factory.mktemp("seed-files"))
        yield running
    finally:
        running.stop()


def _env(stack: Stack, **extra: str) -> dict[str, str]:
    return base_env(stack.data, RAG_API_URL=f"http://127.0.0.1:{stack.rag_port}",
                    DOCENT_GATEWAY_URL=f"http://127.0.0.1:{stack.gw_port}", DOCENT_API_TOKEN=stack.token, **extra)


async def _stdio(stack: Stack, work: Any) -> Any:
    params = StdioServerParameters(command=sys.executable, args=["-m", "rag_system", "mcp"], env=_env(stack),
                                   cwd=str(REPO_ROOT))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        return await work(session)


def _text(result: Any) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


def test_stdio_tools_are_listed_with_schemas(stack: Stack) -> None:
    async def work(session: ClientSession) -> Any:
        return (await session.list_tools()).tools

    tools = {t.name: t for t in anyio.run(_stdio, stack, work)}
    assert set(tools) == {"list_indexes", "search", "ask", "verify"}
    assert set(tools["search"].inputSchema["required"]) == {"query", "index"}
    assert "k" in tools["search"].inputSchema["properties"]
    assert set(tools["ask"].inputSchema["required"]) == {"question", "index"}
    for name in tools:
        assert tools[name].description and tools[name].outputSchema, name
    assert {"answer", "citations", "answer_source"} <= set(tools["ask"].outputSchema["properties"])
    assert "passages" in tools["search"].outputSchema["properties"]
    assert set(tools["verify"].inputSchema["required"]) == {"text", "index"}
    assert {"supported", "sentences"} <= set(tools["verify"].outputSchema["properties"])


def test_stdio_ask_search_and_a_bad_index(stack: Stack) -> None:
    async def work(session: ClientSession) -> dict[str, Any]:
        return {
            "indexes": await session.call_tool("list_indexes", {}),
            "ask": await session.call_tool("ask", {"question": SEED_QUESTION, "index": INDEX_NAME}),
            "search": await session.call_tool("search", {"query": "gearbox inspection", "index": INDEX_NAME, "k": 3}),
            "bad": await session.call_tool("ask", {"question": SEED_QUESTION, "index": "no-such-index"}),
            "verify": await session.call_tool("verify", {"index": INDEX_NAME, "text": (
                "The zephyr turbine gearbox is inspected every 18 months. "
                "The zephyr turbine gearbox is inspected every 6 months.")}),
            "invalid": await session.call_tool("search", {"query": "", "index": INDEX_NAME}),
            "after": await session.call_tool("list_indexes", {}),
        }

    got = anyio.run(_stdio, stack, work)
    listed = got["indexes"].structuredContent["indexes"]
    assert {i["name"] for i in listed} >= {INDEX_NAME} and not got["indexes"].isError
    assert next(i for i in listed if i["name"] == INDEX_NAME)["id"] == stack.seed.index_id

    ask = got["ask"]
    assert not ask.isError, _text(ask)
    answer = ask.structuredContent
    assert answer["answer_source"] in ("llm", "llm_repaired", "extractive") and "18 months" in answer["answer"]
    assert answer["citations"] and all(c["page_start"] >= 1 and c["chunk_id"] for c in answer["citations"])
    cited = answer["citations"][0]
    assert f"[{cited['n']}]" in answer["answer"]
    assert "Sources:" in _text(ask) and cited["document"] in _text(ask)

    search = got["search"]
    assert not search.isError, _text(search)
    passages = search.structuredContent["passages"]
    assert 1 <= len(passages) <= 3
    assert all(p["page_start"] >= 1 and p["page_end"] >= p["page_start"] and p["chunk_id"] for p in passages)
    assert "gearbox" in passages[0]["text"] and "p. " in _text(search)

    checked = got["verify"]
    assert not checked.isError, _text(checked)
    verdicts = [s["verdict"] for s in checked.structuredContent["sentences"]]
    assert verdicts[0] == "supported" and verdicts[1] != "supported", checked.structuredContent
    assert checked.structuredContent["supported"] is False and "✗" in _text(checked) or "?" in _text(checked)
    assert checked.structuredContent["sentences"][0]["evidence"][0]["page"] >= 1

    assert got["bad"].isError and "no-such-index" in _text(got["bad"])
    assert got["invalid"].isError
    assert not got["after"].isError  # the server survived both


def _wait_listening(port: int, proc: subprocess.Popen[bytes], timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise TimeoutError(f"the MCP server did not listen on {port}")


def _post(url: str, token: str | None) -> int:
    request = urllib.request.Request(url, data=b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}',
                                     method="POST", headers={"Content-Type": "application/json",
                                                             "Accept": "application/json, text/event-stream"})
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(request, timeout=30) as resp:
            return resp.status
    except urllib.error.HTTPError as exc:
        return exc.code


def test_http_refuses_without_a_token_and_serves_the_service_token(stack: Stack, tmp_path: Path) -> None:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "rag_system", "mcp", "--http", "--port", str(port)],
                            env=_env(stack), cwd=REPO_ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        _wait_listening(port, proc)
        url = f"http://127.0.0.1:{port}/mcp"
        assert _post(url, None) == 401
        assert _post(url, "not-the-token") == 401

        async def work() -> Any:
            headers = {"Authorization": f"Bearer {stack.token}"}
            async with streamablehttp_client(url, headers=headers) as (read, write, _), \
                    ClientSession(read, write) as session:
                await session.initialize()
                return await session.call_tool("ask", {"question": SEED_QUESTION, "index": INDEX_NAME})

        ask = anyio.run(work)
        assert not ask.isError and ask.structuredContent["citations"], _text(ask)
    finally:
        proc.terminate()
        proc.wait(15)


def test_http_needs_a_token_on_the_install(tmp_path: Path) -> None:
    env = base_env(tmp_path / "data")
    env.pop("DOCENT_API_TOKEN", None)
    done = subprocess.run([sys.executable, "-m", "rag_system", "mcp", "--http", "--port", str(free_port())],
                          env=env, cwd=REPO_ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "DOCENT_API_TOKEN" in done.stderr


def test_a_persons_token_reads_only_what_that_person_may_read(tmp_path: Path) -> None:
    from testkit.accounts import LoginClient, create_user
    from testkit.processes import linked_services
    from testkit.stack import wait_build

    data = tmp_path / "data"
    passwords = {"ann": "ann-password-1", "bob": "bob-password-22"}
    for name, password in passwords.items():
        create_user(data, name, "editor", password)
    with linked_services(data) as (gw, rag):
        ann, bob = LoginClient(gw.url), LoginClient(gw.url)
        assert ann.login("ann", passwords["ann"]).status == 200 and bob.login("bob", passwords["bob"]).status == 200
        iid = ann.post("/indexes", {"name": "Ann turbines"}).json["index_id"]
        up = ann.upload(f"/indexes/{iid}/upload", [("turbine.md", b"# Zephyr\n\nThe zephyr turbine gearbox is "
                                                                  b"inspected every 18 months.\n")])
        assert up.status == 200 and wait_build(ann, iid)["state"] == "done"
        tokens = {who: client.post("/auth/tokens", {"name": "mcp"}).json["token"]
                  for who, client in (("ann", ann), ("bob", bob))}
        env = base_env(data, RAG_API_URL=rag.url, DOCENT_GATEWAY_URL=gw.url)

        async def as_person(token: str) -> dict[str, Any]:
            params = StdioServerParameters(command=sys.executable, args=["-m", "rag_system", "mcp"],
                                           env={**env, "DOCENT_MCP_TOKEN": token}, cwd=str(REPO_ROOT))
            async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                return {"list": await session.call_tool("list_indexes", {}),
                        "ask": await session.call_tool("ask", {"question": SEED_QUESTION, "index": "Ann turbines"}),
                        "by_id": await session.call_tool("search", {"query": "gearbox", "index": iid})}

        mine, theirs, nobody = anyio.run(as_person, tokens["ann"]), anyio.run(as_person, tokens["bob"]), \
            anyio.run(as_person, "dpt_not-a-token")
    assert [i["name"] for i in mine["list"].structuredContent["indexes"]] == ["Ann turbines"]
    assert not mine["ask"].isError and mine["ask"].structuredContent["citations"], _text(mine["ask"])
    assert not mine["by_id"].isError and mine["by_id"].structuredContent["passages"]
    assert theirs["list"].structuredContent["indexes"] == []
    assert theirs["ask"].isError and theirs["by_id"].isError and "18 months" not in _text(theirs["ask"])
    assert nobody["list"].isError and "refused" in _text(nobody["list"])
