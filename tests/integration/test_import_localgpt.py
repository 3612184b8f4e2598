"""`python -m backend import-localgpt` on a database written by localGPT's own code.

localGPT's `ChatDatabase` (../shared/localgpt-app/backend/database.py, loaded from there, not
copied) writes 3 sessions, 12 messages and 2 indexes with their documents and links, one
document's file deleted afterwards. The import runs as a user runs it, against both real
services: counts reported, the missing file named, the history visible through the gateway,
a question answered from the re-indexed documents, and a second run imports nothing.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from testkit.processes import REPO_ROOT, GatewayProcess, RagApiProcess, base_env, linked_services

pytestmark = pytest.mark.slow

LOCALGPT_DB = Path("/work/shared/localgpt-app/backend/database.py")
POLICY = "# Leave policy\n\nEmployees accrue 25 days of annual leave per year.\n"
TURBINE = "# Zephyr turbine\n\nThe zephyr turbine gearbox is inspected every 18 months.\n"
#: The sessions of the install (title, the index it is linked to), two questions and answers each.
SESSIONS = (("Leave questions", "hr"), ("Turbine", "plant"), ("Chit-chat", None))


def localgpt_database() -> ModuleType:
    if not LOCALGPT_DB.is_file():
        pytest.skip(f"localGPT's schema is not at {LOCALGPT_DB}")
    spec = importlib.util.spec_from_file_location("localgpt_database", LOCALGPT_DB)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def localgpt_install(root: Path) -> dict[str, Any]:
    """A localGPT install under `root`: chat_data.db written by its own ChatDatabase (3 sessions,
    12 messages, 2 indexes, one document's file deleted afterwards) and its upload folder."""
    uploads = root / "shared_uploads"
    uploads.mkdir()
    (uploads / "policy.md").write_text(POLICY)
    (uploads / "turbine.md").write_text(TURBINE)
    (uploads / "gone.pdf").write_bytes(b"%PDF-1.4 soon deleted")
    db = localgpt_database().ChatDatabase(str(root / "chat_data.db"))
    ids: dict[str, str] = {}
    ids["hr"] = db.create_index("HR handbook", "policies", {"chunk_size": 512, "embedding_model": "x"})
    ids["plant"] = db.create_index("Plant manuals", None, {})
    db.add_document_to_index(ids["hr"], "policy.md", str(uploads / "policy.md"))
    db.add_document_to_index(ids["hr"], "gone.pdf", str(uploads / "gone.pdf"))
    db.add_document_to_index(ids["plant"], "turbine.md", "shared_uploads/turbine.md")  # relative, as it ran
    for n, (name, index) in enumerate(SESSIONS):
        sid = db.create_session(name, "qwen3.5:9b")
        ids[f"s{n}"] = sid
        if index:
            db.link_index_to_session(sid, ids[index])
        for turn in range(2):
            db.add_message(sid, f"{name} question {turn}?", "user")
            db.add_message(sid, f"{name} answer {turn}.", "assistant",
                           {"source_documents": [{"document_name": "policy.md", "text": "25 days", "score": 0.82}]}
                           if index else {})  # localGPT stores its retrieval score; its client shows scored sources
    (uploads / "gone.pdf").unlink()  # a document whose file is gone: reported, not fatal
    return {"db": root / "chat_data.db", "uploads": uploads, "root": root, "ids": ids}


@pytest.fixture(scope="module")
def install(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return localgpt_install(tmp_path_factory.mktemp("localgpt"))


@pytest.fixture(scope="module")
def services(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[GatewayProcess, RagApiProcess, Path]]:
    data = tmp_path_factory.mktemp("imported") / "data"
    with linked_services(data) as (gateway, rag):
        yield gateway, rag, data


def run_import(data: Path, rag: RagApiProcess, install: dict, *extra: str) -> subprocess.CompletedProcess[str]:
    env = base_env(data, RAG_API_URL=rag.url)
    return subprocess.run([sys.executable, "-m", "backend", "import-localgpt", "--db", str(install["db"]),
                           "--uploads", str(install["uploads"]), *extra], env=env, cwd=str(REPO_ROOT),
                          capture_output=True, text=True, timeout=900, check=False)


def test_import_brings_history_and_indexes_across_once(services, install) -> None:  # type: ignore[no-untyped-def]
    gateway, rag, data = services
    ids = install["ids"]
    first = run_import(data, rag, install)
    out = first.stdout
    assert first.returncode == 0, out + first.stderr
    assert "sessions: 3 imported, 0 already here" in out and "messages: 12 imported" in out, out
    assert "indexes: 2 imported" in out and "documents: 2 copied, 0 already here, 1 missing" in out, out
    assert "missing: HR handbook: gone.pdf" in out and "session links: 2 made" in out, out
    assert out.count("build done:") == 2, out

    gw = gateway.client
    sessions = {s["id"]: s for s in gw.get("/sessions").json["sessions"]}
    assert {ids["s0"], ids["s1"], ids["s2"]} <= set(sessions)
    assert sessions[ids["s0"]]["title"] == "Leave questions" and sessions[ids["s0"]]["message_count"] == 4
    assert sessions[ids["s0"]]["model_used"] == "qwen3.5:9b"
    messages = gw.get(f"/sessions/{ids['s0']}").json["messages"]
    assert [(m["sender"], m["content"]) for m in messages] == [
        ("user", "Leave questions question 0?"), ("assistant", "Leave questions answer 0."),
        ("user", "Leave questions question 1?"), ("assistant", "Leave questions answer 1.")]
    assert messages[1]["metadata"]["source_documents"][0]["text"] == "25 days"
    assert len({m["turn_id"] for m in messages}) == 2  # each question and its answer are one turn
    hr = gw.get(f"/indexes/{ids['hr']}").json
    assert hr["name"] == "HR handbook" and hr["metadata"]["status"] == "ready"
    assert [d["filename"] for d in hr["documents"]] == ["policy.md"]
    assert [i["id"] for i in gw.get(f"/sessions/{ids['s1']}/indexes").json["indexes"]] == [ids["plant"]]

    # questions are answered from the re-indexed documents, in the imported session
    asked = gw.post(f"/sessions/{ids['s0']}/messages", {"message": "How many days of annual leave are accrued?"})
    assert asked.status == 200 and "25 days" in asked.json["response"], asked.body
    assert asked.json["citations"][0]["document_name"] == "policy.md"
    turbine = gw.post(f"/sessions/{ids['s1']}/messages", {"message": "How often is the gearbox inspected?"})
    assert turbine.status == 200 and "18 months" in turbine.json["response"], turbine.body

    second = run_import(data, rag, install, "--json")
    assert second.returncode == 0, second.stdout + second.stderr
    report = json.loads(second.stdout)
    assert (report["sessions"], report["messages"], report["indexes"], report["documents"]) == (0, 0, 0, 0), report
    assert (report["sessions_existing"], report["messages_existing"], report["indexes_existing"]) == (3, 12, 2)
    assert report["builds"] == {} and report["links"] == 0 and len(report["missing_files"]) == 1
    assert len(gw.get(f"/sessions/{ids['s0']}").json["messages"]) == 6  # the four imported and the new turn


def test_a_file_that_is_not_a_localgpt_database_is_refused(services, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _, rag, data = services
    not_db = tmp_path / "notes.db"
    not_db.write_text("just text")
    done = subprocess.run([sys.executable, "-m", "backend", "import-localgpt", "--db", str(not_db)],
                          env=base_env(data, RAG_API_URL=rag.url), cwd=str(REPO_ROOT), capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 2 and "error:" in done.stderr and "Traceback" not in done.stderr, done.stderr
