"""The gateway's replica spreading against real RAG API servers on loopback.

Three in-process RAG APIs share one store: a writer and two query replicas.
Which replica answered is read from each server's own `/metrics` counters.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from backend.app import _rag
from backend.config import load_gateway_config
from backend.rag_client import RagClient
from backend.rag_replicas import RagReplicas
from common.errors import ApiError
from testkit.client import Client
from testkit.replicas import free_port
from tests.integration.api_support import Api, api_settings, build, running_api, write_docs

CHAT = {"query": "How often should hydrangeas be watered?", "index": "kb", "backend": "extractive"}


@contextmanager
def serving(service, port: int) -> Iterator[None]:  # type: ignore[no-untyped-def]
    """A RAG API server for an existing service on a fixed port (so a test can stop and restart it)."""
    from rag_system.api.server import serve

    server = serve(service, "127.0.0.1", port)
    server.serve_in_thread()
    try:
        yield
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def apis(tmp_path_factory, embedder):  # type: ignore[no-untyped-def]
    from rag_system.api.app import Service

    root = tmp_path_factory.mktemp("gw-replicas")
    uri = str(root / "store")
    with running_api(api_settings(root / "w", LANCEDB_URI=uri, DOCENT_ROLE="writer"), embedder) as writer:
        job, _ = build(writer, "kb", [str(write_docs(writer.uploads / "docs"))])
        assert job["state"] == "done", job
        readers = [Service(api_settings(root / f"r{i}", LANCEDB_URI=uri, DOCENT_ROLE="reader"), embedder=embedder)
                   for i in range(2)]
        ports = [free_port(), free_port()]
        with serving(readers[0], ports[0]), serving(readers[1], ports[1]):
            yield writer, readers, ports
        for service in readers:
            service.close()


def _chats(port: int, at_least: int = 0) -> int:
    """POST /chat requests answered 200 by the RAG API on `port`, from its own metrics.

    The RAG API counts a request after it has sent the response, so a count read right after the
    last answer may still lack it: with `at_least`, the count is read again for up to 5 s until it
    reaches that many (it is returned either way, for the caller's assertion)."""
    deadline = time.monotonic() + 5
    while True:
        status, _, text = Api("127.0.0.1", port, None, None).call("GET", "/metrics")  # type: ignore[arg-type]
        assert status == 200
        m = re.search(r'docent_rag_requests_total\{[^}]*route="/chat"[^}]*status="200"[^}]*\} (\d+)', text)
        count = int(m.group(1)) if m else 0
        if count >= at_least or time.monotonic() > deadline:
            return count
        time.sleep(0.1)


def _pool(ports: list[int], writer: Api, retry_after_s: float = 0.2) -> RagReplicas:
    return RagReplicas([f"http://127.0.0.1:{p}" for p in ports], f"http://127.0.0.1:{writer.port}",
                       timeout_s=60, retry_after_s=retry_after_s)


def test_chat_is_spread_round_robin(apis):
    writer, _, ports = apis
    pool = _pool(ports, writer)
    before = [_chats(p) for p in ports]
    for _ in range(4):
        assert pool.chat(CHAT)["citations"]
    assert [_chats(p) - b for p, b in zip(ports, before, strict=True)] == [2, 2]
    assert _chats(writer.port) == 0


def test_failed_replica_is_taken_out_retried_elsewhere_and_put_back(apis, tmp_path, embedder):
    from rag_system.api.app import Service

    writer, _, ports = apis
    late = free_port()  # a replica that is down at first
    pool = _pool([ports[0], late], writer)
    before = _chats(ports[0])
    for _ in range(3):
        assert pool.chat(CHAT)["citations"]
    assert _chats(ports[0], at_least=before + 3) - before == 3
    assert [r["ready"] for r in pool.health()[1]["replicas"]] == [True, False]
    assert not pool.in_service(pool.replicas[1])

    # It comes up: once its health probe passes it takes its turn again.
    service = Service(api_settings(tmp_path / "late", LANCEDB_URI=str(writer.service.settings.lancedb_uri),
                                   DOCENT_ROLE="reader"), embedder=embedder)
    try:
        with serving(service, late):
            time.sleep(0.3)  # past retry_after_s
            for _ in range(4):
                assert pool.chat(CHAT)["citations"]
            assert _chats(late) == 2
            assert all(pool.in_service(c) for c in pool.replicas)
    finally:
        service.close()


def test_all_replicas_down_is_a_clear_502(apis):
    writer, _, _ = apis
    pool = RagReplicas([f"http://127.0.0.1:{free_port()}", f"http://127.0.0.1:{free_port()}"],
                       f"http://127.0.0.1:{writer.port}", timeout_s=5)
    with pytest.raises(ApiError) as caught:
        pool.chat(CHAT)
    assert caught.value.status == 502 and "no RAG API replica could answer" in caught.value.message


def test_client_errors_are_not_retried_and_keep_replicas_in(apis):
    writer, _, ports = apis
    pool = _pool(ports, writer)
    before = [_chats(p) for p in ports]
    with pytest.raises(ApiError) as caught:
        pool.chat({**CHAT, "index": "no-such-index"})
    assert 400 <= caught.value.status < 500
    assert all(pool.in_service(c) for c in pool.replicas)
    assert [_chats(p) for p in ports] == before


def test_index_requests_go_to_the_writer(apis, tmp_path):
    writer, readers, ports = apis
    pool = _pool(ports, writer)
    docs = write_docs(writer.uploads / "more", {"owls.md": "Barn owls hunt voles at night."})
    started = pool.start_index("kb2", [str(docs)])
    assert writer.service.jobs.get(started["job_id"]) is not None
    assert all(r.jobs.get(started["job_id"]) is None for r in readers)
    deadline = time.monotonic() + 120
    while pool.job(started["job_id"])["state"] not in ("done", "failed"):
        assert time.monotonic() < deadline
        time.sleep(0.2)
    assert pool.job(started["job_id"])["state"] == "done"
    assert pool.delete_index("kb2") is True


def test_gateway_builds_on_the_writer_and_chats_over_the_readers(apis):
    """The whole path through a real gateway: upload and build reach the writer, chat the readers."""
    from backend.app import App
    from backend.server import serve

    writer, readers, ports = apis
    config = load_gateway_config({"DOCENT_DATA_DIR": str(writer.data_dir),  # the writer reads its uploads
                                  "RAG_API_URL": ",".join(f"http://127.0.0.1:{p}" for p in ports),
                                  "RAG_WRITER_URL": f"http://127.0.0.1:{writer.port}"}, dotenv_path=None)
    app = App.build(config)
    server = serve(app, "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    gw = Client(f"http://127.0.0.1:{server.server_address[1]}")
    try:
        iid = gw.post("/indexes", {"name": "replicated"}).json["index_id"]
        text = b"Lighthouse keepers trim the lamp wick every evening at dusk."
        assert gw.upload(f"/indexes/{iid}/upload", [("lighthouse.md", text)]).status == 200
        started = gw.post(f"/indexes/{iid}/build")
        assert started.status == 202, started.body
        job_id = started.json["job_id"]
        assert writer.service.jobs.get(job_id) is not None
        deadline = time.monotonic() + 120
        while gw.get(f"/indexes/{iid}/jobs/{job_id}").json["state"] not in ("done", "failed"):
            assert time.monotonic() < deadline
            time.sleep(0.2)
        assert gw.get(f"/indexes/{iid}/jobs/{job_id}").json["state"] == "done"

        sid = gw.post("/sessions", {"title": "replicas"}).json["session_id"]
        assert gw.post(f"/sessions/{sid}/indexes/{iid}").status == 200
        before = [_chats(p) for p in ports]
        for _ in range(4):
            reply = gw.post(f"/sessions/{sid}/messages", {"message": "When do lighthouse keepers trim the wick?",
                                                          "backend": "extractive"})
            assert reply.status == 200, reply.body
            assert reply.json["citations"][0]["document_name"] == "lighthouse.md"
        assert [_chats(p) - b for p, b in zip(ports, before, strict=True)] == [2, 2]
        health = gw.get("/health").json["rag_api"]
        assert [r["ready"] for r in health["replicas"]] == [True, True]
        assert health["writer"] == f"http://127.0.0.1:{writer.port}"
    finally:
        server.shutdown()
        server.server_close()
        app.close()


def test_single_url_keeps_the_plain_client():
    one = _rag(load_gateway_config({"RAG_API_URL": "http://127.0.0.1:9001"}, dotenv_path=None))
    assert type(one) is RagClient and one.base_url == "http://127.0.0.1:9001"
    many = load_gateway_config({"RAG_API_URL": "http://a:1, http://b:2/", "RAG_WRITER_URL": "http://w:3"},
                               dotenv_path=None)
    assert (many.rag_api_urls, many.rag_writer_url, many.rag_api_url) == (
        ("http://a:1", "http://b:2"), "http://w:3", "http://a:1")
    pool = _rag(many)
    assert isinstance(pool, RagReplicas) and pool.writer.base_url == "http://w:3"
    assert load_gateway_config({"RAG_API_URL": "http://a:1,http://b:2"}, dotenv_path=None).rag_writer_url == "http://a:1"
