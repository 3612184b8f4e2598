"""Synced folders through the gateway, over real HTTP, with the RAG API as its own process.

Bind a folder to an index -> the first sync fills it -> files added, edited
and deleted in the folder reach the index by themselves (file events,
debounced), with nobody pressing "sync" -> the binding survives a restart of
the RAG API -> unbinding stops it. Bad requests are 4xx with a code.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from testkit.client import Client
from testkit.processes import GatewayProcess, RagApiProcess, linked_services

pytestmark = pytest.mark.slow

SYNC_ENV = {"SYNC_SETTLE_S": "0.3", "SYNC_DEBOUNCE_S": "0.5", "SYNC_RESCAN_S": "0", "EMBEDDER": "minilm"}


class Stack:
    def __init__(self, data: Path, root: Path, gateway: GatewayProcess, rag: RagApiProcess) -> None:
        self.data, self.root, self.gateway, self.rag = data, root, gateway, rag
        self.gw: Client = gateway.client


def _rag(data: Path, root: Path, rag_port: int, gw_port: int) -> RagApiProcess:
    return RagApiProcess(data, rag_port, gateway_url=f"http://127.0.0.1:{gw_port}", DOCENT_INDEX_ROOTS=str(root),
                         **SYNC_ENV)


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    base = tmp_path_factory.mktemp("sync")
    data, root = base / "data", base / "shared"
    root.mkdir()
    with linked_services(data, DOCENT_INDEX_ROOTS=str(root), **SYNC_ENV) as (gateway, rag):
        s = Stack(data, root, gateway, rag)
        try:
            yield s
        finally:
            if s.rag is not rag:  # a test restarted the RAG API
                s.rag.stop()


def _write(path: Path, text: str, age_s: float = 0.0) -> None:
    path.write_text(text)
    if age_s:
        past = time.time() - age_s
        os.utime(path, (past, past))


def _sync_state(gw: Client, iid: str, until: Any, timeout_s: float = 120.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    state: dict[str, Any] = {}
    while time.monotonic() < deadline:
        reply = gw.get(f"/indexes/{iid}/sync")
        assert reply.status == 200, reply.json
        state = reply.json
        if state["state"] == "idle" and until(state):
            return state
        time.sleep(0.3)
    raise AssertionError(f"the sync state never got there: {state}")


def _names(rag: RagApiProcess, iid: str, phrase: str) -> set[str]:
    """The documents whose retrieved chunks hold `phrase` (asked as the question)."""
    reply = rag.client.post("/retrieve", {"query": phrase, "index": iid, "retrieval_k": 5})
    assert reply.status == 200, reply.json
    return {r["document_name"] for r in reply.json["results"] if phrase in r["text"]}


def test_a_bound_folder_keeps_the_index_current(stack: Stack) -> None:
    gw = stack.gw
    folder = stack.root / "handbook"
    folder.mkdir()
    _write(folder / "herons.md", "# Herons\n\nHerons nest in the reeds by the lake every spring.\n", age_s=60)
    _write(folder / "otters.md", "# Otters\n\nOtters hunt at dusk along the river bank.\n", age_s=60)
    iid = gw.post("/indexes", {"name": "Handbook"}).json["index_id"]

    bound = gw.post(f"/indexes/{iid}/sync/folders", {"folder": str(folder)})
    assert bound.status == 201 and bound.json["folders"] == [str(folder.resolve())], bound.json
    state = _sync_state(gw, iid, lambda s: s["last_sync"] is not None)
    assert state["last_sync"]["added"] == 2 and state["last_sync"]["trigger"] == "bind" and state["watching"]
    assert gw.get(f"/indexes/{iid}").json["metadata"]["status"] == "ready"
    assert _names(stack.rag, iid, "nest in the reeds") == {"herons.md"}

    # Nobody presses sync: the file events do it (debounced into one sync per burst).
    _write(folder / "badgers.md", "# Badgers\n\nBadgers dig their setts under old oak trees.\n")
    _write(folder / "otters.md", "# Otters\n\nOtters sleep in holts dug into the river bank.\n")
    state = _sync_state(gw, iid, lambda s: s["history"][0]["trigger"] == "watch"
                        and sum(h["files_changed"] for h in s["history"] if h["trigger"] == "watch") >= 2)
    watch_runs = [h for h in state["history"] if h["trigger"] == "watch"]
    assert sum(h["files_changed"] for h in watch_runs) == 2, state["history"]
    assert _names(stack.rag, iid, "dig their setts") == {"badgers.md"}
    assert _names(stack.rag, iid, "sleep in holts") == {"otters.md"}
    assert _names(stack.rag, iid, "hunt at dusk") == set()  # the old version is gone

    (folder / "herons.md").unlink()
    _sync_state(gw, iid, lambda s: s["last_sync"]["removed"] == 1)
    assert _names(stack.rag, iid, "nest in the reeds") == set()

    # The binding is kept with the index: a restarted RAG API watches the folder again.
    port = stack.rag.port
    stack.rag.stop()
    stack.rag = _rag(stack.data, stack.root, port, stack.gateway.port)
    stack.rag.start(wait_s=240)
    _write(folder / "swifts.md", "# Swifts\n\nSwifts sleep on the wing above the town.\n")
    _sync_state(gw, iid, lambda s: s["last_sync"]["trigger"] == "watch" and s["last_sync"]["added"] == 1)
    assert _names(stack.rag, iid, "sleep on the wing") == {"swifts.md"}

    # Sync now (the button) and unbind.
    started = gw.post(f"/indexes/{iid}/sync", {})
    assert started.status == 202 and started.json["job_id"], started.json
    state = _sync_state(gw, iid, lambda s: s["last_sync"]["trigger"] == "manual")
    assert state["last_sync"]["files_changed"] == 0
    runs = len(state["history"])
    gone = gw.delete(f"/indexes/{iid}/sync/folders", body={"folder": str(folder)})
    assert gone.status == 200 and gone.json["folders"] == [], gone.json
    _write(folder / "wrens.md", "# Wrens\n\nWrens sing loudly for such small birds.\n")
    time.sleep(3.0)  # six debounce periods: a still-bound folder would have synced by now
    assert len(_sync_state(gw, iid, lambda s: True)["history"]) == runs
    assert _names(stack.rag, iid, "sing loudly") == set()


def test_sync_requests_are_checked(stack: Stack) -> None:
    gw = stack.gw
    iid = gw.post("/indexes", {"name": "Unsynced"}).json["index_id"]
    assert gw.get("/indexes/no-such-index/sync").status == 404
    assert gw.post(f"/indexes/{iid}/sync/folders", {}).json["code"] == "invalid_field"
    outside = gw.post(f"/indexes/{iid}/sync/folders", {"folder": str(stack.data)})
    assert outside.status == 403 and outside.json["code"] == "path_not_allowed", outside.json
    missing = gw.post(f"/indexes/{iid}/sync/folders", {"folder": str(stack.root / "missing")})
    assert missing.status == 404 and missing.json["code"] == "path_not_found", missing.json
    nothing = gw.post(f"/indexes/{iid}/sync", {})
    assert nothing.status == 409 and nothing.json["code"] == "no_synced_folders", nothing.json
    state = gw.get(f"/indexes/{iid}/sync").json
    assert state["folders"] == [] and state["last_sync"] is None and state["state"] == "idle"
