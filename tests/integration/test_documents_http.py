"""One document at a time, and a conversation taken away as Markdown: both services over real HTTP.

A document removed from an index (`DELETE /indexes/<id>/documents/<doc>`) loses its chunks in the
RAG API, its row and its file, and is never retrieved or cited again; a file uploaded again under
the same name replaces the older version in the next build; bad requests (a document of another
index, deleting twice, an unknown index, the RAG API down) change nothing. The export's page
links are fetched back from the gateway. The RAG API answers extractively (no model).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from testkit.client import Client
from testkit.docs import PDF_PAGE_WORDS, make_pdf
from testkit.processes import GatewayProcess, RagApiProcess, linked_services
from testkit.stack import file_hashes, wait_build

pytestmark = pytest.mark.slow

LEAVE_V1 = "# Leave policy\n\nEmployees accrue 25 days of annual leave per year.\n"
LEAVE_V2 = "# Leave policy\n\nEmployees accrue 30 days of annual leave per year.\n"
TURBINE = "# Zephyr turbine\n\nThe zephyr turbine gearbox is inspected every 18 months by a certified engineer.\n"


@pytest.fixture(scope="module")
def services(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, GatewayProcess, RagApiProcess]]:
    data = tmp_path_factory.mktemp("documents") / "data"
    with linked_services(data) as (gateway, rag):
        yield data, gateway, rag


def _index(gw: Client, name: str, files: list[tuple[str, bytes]]) -> tuple[str, list[dict[str, Any]]]:
    iid = gw.post("/indexes", {"name": name}).json["index_id"]
    up = gw.upload(f"/indexes/{iid}/upload", files)
    assert up.status == 200, up.body
    assert wait_build(gw, iid)["state"] == "done"
    return iid, up.json["uploaded_files"]


def _ask(gw: Client, iid: str, question: str) -> dict[str, Any]:
    sid = gw.post("/sessions", {"title": question[:40]}).json["session_id"]
    assert gw.post(f"/sessions/{sid}/indexes/{iid}").status == 200
    reply = gw.post(f"/sessions/{sid}/messages", {"message": question, "force_rag": True})
    assert reply.status == 200, reply.body
    return {**reply.json, "session_id": sid}


def _chunks(rag: RagApiProcess, iid: str) -> int:
    return {i["name"]: i["chunks"] for i in rag.client.get("/indexes").json["indexes"]}.get(iid, 0)


def test_a_removed_document_is_never_retrieved_or_cited_again(services, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    data, gateway, rag = services
    gw = gateway.client
    pdf = make_pdf(tmp_path / "guide.pdf").read_bytes()
    iid, uploaded = _index(gw, "Field notes", [("guide.pdf", pdf), ("turbine.md", TURBINE.encode())])
    other, _ = _index(gw, "Other", [("turbine.md", TURBINE.encode())])
    guide = next(u for u in uploaded if u["filename"] == "guide.pdf")
    question = f"Where is the {PDF_PAGE_WORDS[1]} described?"
    before = _ask(gw, iid, question)
    assert any(c["document_name"] == "guide.pdf" for c in before["citations"]), before["citations"]
    chunks_before = _chunks(rag, iid)

    # a document of another index, an unknown index: 404, nothing changed
    snapshot = (file_hashes(data / "uploads"), gw.get(f"/indexes/{other}").json["documents"], _chunks(rag, iid))
    wrong = gw.delete(f"/indexes/{other}/documents/{guide['document_id']}")
    assert (wrong.status, wrong.json["code"]) == (404, "document_not_found")
    assert gw.delete(f"/indexes/nope/documents/{guide['document_id']}").json["code"] == "index_not_found"
    assert (file_hashes(data / "uploads"), gw.get(f"/indexes/{other}").json["documents"], _chunks(rag, iid)) == snapshot

    done = gw.delete(f"/indexes/{iid}/documents/{guide['document_id']}")
    assert done.status == 200, done.body
    assert done.json["deleted"] is True and done.json["chunks_removed"] is True and done.json["files_removed"] == 1
    assert [d["filename"] for d in done.json["index"]["documents"]] == ["turbine.md"]
    assert not Path(guide["stored_path"]).exists()
    assert 0 < _chunks(rag, iid) < chunks_before

    after = _ask(gw, iid, question)
    assert all(s["document_name"] != "guide.pdf" for s in after["source_documents"]), after["source_documents"]
    assert all(c["document_name"] != "guide.pdf" for c in after["citations"])
    retrieved = rag.client.post("/retrieve", {"query": PDF_PAGE_WORDS[1], "index": iid, "retrieval_mode": "fts_only"})
    assert all(r["document_name"] != "guide.pdf" and "guide" not in r["document_name"]
               for r in retrieved.json["results"])

    # deleting twice: 404, nothing changed
    snapshot = (file_hashes(data / "uploads"), _chunks(rag, iid))
    twice = gw.delete(f"/indexes/{iid}/documents/{guide['document_id']}")
    assert (twice.status, twice.json["code"]) == (404, "document_not_found")
    assert (file_hashes(data / "uploads"), _chunks(rag, iid)) == snapshot
    # the audit log names the removal
    assert any(e["action"] == "delete_document" and e["detail"].get("filename") == "guide.pdf"
               for e in gw.get("/admin/audit?limit=20").json["entries"])


def test_uploading_the_same_name_again_replaces_the_old_version_in_the_next_build(services) -> None:  # type: ignore[no-untyped-def]
    _, gateway, rag = services
    gw = gateway.client
    iid, first = _index(gw, "Handbook", [("leave.md", LEAVE_V1.encode())])
    assert "25 days" in _ask(gw, iid, "How many days of annual leave do employees accrue?")["response"]
    second = gw.upload(f"/indexes/{iid}/upload", [("leave.md", LEAVE_V2.encode())]).json["uploaded_files"][0]
    listed = gw.get(f"/indexes/{iid}").json
    assert [(d["filename"], d["replaced"]) for d in listed["documents"]] == [("leave.md", True), ("leave.md", False)]
    assert listed["document_count"] == 1
    job = wait_build(gw, iid)
    assert job["state"] == "done" and job["summary"]["files"]["removed"] == 1
    answer = _ask(gw, iid, "How many days of annual leave do employees accrue?")
    assert "30 days" in answer["response"] and "25 days" not in answer["response"]
    assert all("25 days" not in s["text"] for s in answer["source_documents"])
    docs = gw.get(f"/indexes/{iid}").json["documents"]
    assert [d["id"] for d in docs] == [second["document_id"]] and not Path(first[0]["stored_path"]).exists()


def test_a_conversation_exports_as_markdown_with_page_links_that_resolve(services, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _, gateway, _ = services
    gw = gateway.client
    iid, _ = _index(gw, "Guide", [("atlas.pdf", make_pdf(tmp_path / "atlas.pdf").read_bytes()),
                                  ("turbine.md", TURBINE.encode())])
    first = _ask(gw, iid, f"Where is the {PDF_PAGE_WORDS[2]} described?")
    sid = first["session_id"]
    gw.post(f"/sessions/{sid}/messages", {"message": "How often is the zephyr turbine gearbox inspected?",
                                          "force_rag": True})
    reply = gw.get(f"/sessions/{sid}/export?format=md")
    assert reply.status == 200 and reply.headers["content-type"].startswith("text/markdown")
    assert "attachment" in reply.headers["content-disposition"]
    text = reply.body.decode()
    assert text.startswith("# ") and f"## 1. Where is the {PDF_PAGE_WORDS[2]} described?" in text
    assert "## 2. How often is the zephyr turbine gearbox inspected?" in text and "18 months" in text
    pages = re.findall(r"\[atlas\.pdf, p\. (\d+)\]\((http://[^)\s]+)\)", text)
    assert pages, text
    for page, link in pages:
        assert link.startswith(gateway.url) and f"/pages/{page}.png" in link
        image = gw.get(link[len(gateway.url):])
        assert image.status == 200 and image.headers["content-type"] == "image/png" and image.body[:4] == b"\x89PNG"
    files = re.findall(r"\[turbine\.md\]\((http://[^)\s]+)\)", text)
    assert files and gw.get(files[0][len(gateway.url):]).body.decode() == TURBINE
    assert gw.get(f"/sessions/{sid}/export?format=html").json["code"] == "invalid_field"
    assert gw.get("/sessions/nope/export?format=md").json["code"] == "session_not_found"


def test_with_the_rag_api_down_a_document_is_not_removed(tmp_path: Path) -> None:
    from testkit.processes import free_port

    data = tmp_path / "data"
    gateway = GatewayProcess(data, rag_url=f"http://127.0.0.1:{free_port()}")
    gateway.start(wait_s=30)
    try:
        gw = gateway.client
        iid = gw.post("/indexes", {"name": "Offline"}).json["index_id"]
        doc = gw.upload(f"/indexes/{iid}/upload", [("leave.md", LEAVE_V1.encode())]).json["uploaded_files"][0]
        reply = gw.delete(f"/indexes/{iid}/documents/{doc['document_id']}")
        assert (reply.status, reply.json["code"]) == (502, "rag_api_unavailable")
        assert [d["id"] for d in gw.get(f"/indexes/{iid}").json["documents"]] == [doc["document_id"]]
        assert Path(doc["stored_path"]).exists()
    finally:
        gateway.stop()
