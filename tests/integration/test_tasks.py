"""Summary, compare, routing and the evidence inspector over real HTTP and the real CLI, on a real index."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from testkit import REPO_ROOT
from tests.integration.api_support import api_settings, build, running_api

DOCS = {
    "lease-2023.md": "# Office lease 2023\n\n## Parties\n\nThis lease agreement is entered into as of March 3, 2023, "
                     "between Harbour Estates Ltd (\"Landlord\") and Quillwort Analytics LLC (\"Tenant\").\n\n"
                     "## Rent\n\nThe Tenant shall pay a monthly rent of $4,500 on the first day of each month.\n\n"
                     "## Term\n\nThe lease term is twelve (12) months starting on April 1, 2023.\n",
    "lease-2024.md": "# Office lease 2024\n\n## Parties\n\nThis lease agreement is entered into as of March 5, 2024, "
                     "between Harbour Estates Ltd (\"Landlord\") and Quillwort Analytics LLC (\"Tenant\").\n\n"
                     "## Rent\n\nThe Tenant shall pay a monthly rent of $4,900 on the first day of each month. "
                     "A late fee of 5% applies after the tenth day.\n\n"
                     "## Parking\n\nTwo parking bays in the basement garage are included for the Tenant.\n",
    "07_nda.txt": "MUTUAL NON-DISCLOSURE AGREEMENT\n\nThis Mutual Non-Disclosure Agreement is entered into as of "
                  "October 1, 2024, by and between TechCorp Industries, Inc. and StartupXYZ LLC.\n\n"
                  "The purpose of this agreement is to explore a possible acquisition of StartupXYZ by TechCorp.\n\n"
                  "This NDA shall remain in effect for three (3) years from the date first written above.\n\n"
                  "Confidential Information does not include information that is publicly available.\n",
}


@pytest.fixture(scope="module")
def api(tmp_path_factory, embedder):  # type: ignore[no-untyped-def]
    root = tmp_path_factory.mktemp("tasks")
    settings = api_settings(root / "data")
    with running_api(settings, embedder) as api:
        folder = api.uploads / "docs"
        folder.mkdir(parents=True)
        for name, text in DOCS.items():
            (folder / name).write_text(text)
        job, _ = build(api, "kb", [str(folder)])
        assert job["state"] == "done", job
        yield api


def chat(api, **body):  # type: ignore[no-untyped-def]
    status, _, payload = api.call("POST", "/chat", {"index": "kb", "backend": "extractive", **body})
    return status, payload


def assert_citations_true(payload) -> None:  # type: ignore[no-untyped-def]
    """Every cited quote is text of the cited document (on the cited page)."""
    assert payload["citations"], payload["answer"]
    for c in payload["citations"]:
        source = " ".join(DOCS[c["document_name"]].split())
        assert " ".join(c["quote"].split()) in source, c
        assert c["page_start"] == 1


def test_summary_over_http_cites_only_its_document(api):
    status, body = chat(api, query="summary please", task="summary", documents=["the NDA"])
    assert status == 200, body
    assert body["route"] == "task" and body["task"] == "summary" and body["answer_source"] == "extractive"
    assert [d["document_name"] for d in body["documents"]] == ["07_nda.txt"]
    assert [p["key"] for p in body["parts"]] == ["purpose", "content", "figures", "conclusions", "limitations"]
    assert body["validation"]["valid"] and body["validation"]["invalid"] == []
    assert {c["document_name"] for c in body["citations"]} == {"07_nda.txt"}
    assert_citations_true(body)
    stated = [p for p in body["parts"] if p["source"] != "not_stated"]
    assert len(stated) >= 3 and all(p["validation"]["valid"] for p in stated)
    assert "three (3) years" in body["answer"]
    assert [s["type"] for s in body["steps"]][:2] == ["analyze", "task_resolved"]


def test_compare_over_http_is_a_cited_table(api):
    status, body = chat(api, query="compare", task="compare", documents=["lease 2023", "lease-2024.md"])
    assert status == 200, body
    rows = body["table"]["rows"]
    assert [r["key"] for r in rows] == ["scope", "parties", "numbers", "obligations", "dates", "differences"]
    for row in rows:
        for cell, doc in zip(row["cells"], body["table"]["documents"]):
            assert cell["text"] == "Not stated in the document." or cell["validation"]["valid"], cell
            assert cell["document_id"] == doc["document_id"]
    numbers = rows[2]["cells"]
    assert "$4,500" in numbers[0]["text"] and "$4,900" in numbers[1]["text"]
    assert "parking" in rows[5]["cells"][1]["text"].lower()  # only the 2024 lease has parking
    assert body["validation"]["valid"]
    assert_citations_true(body)


def test_auto_routes_detects_and_asks_back(api):
    status, body = chat(api, query="compare the lease and the NDA", task="auto")
    assert status == 200 and body["answer_source"] == "clarification", body
    assert "lease-2023.md" in body["answer"] and "lease-2024.md" in body["answer"]
    status, body = chat(api, query="Summarize the NDA", task="auto")
    assert body["task"] == "summary" and body["validation"]["valid"]
    status, body = chat(api, query="What is the monthly rent in 2024?", task="auto")
    assert body["task"] == "qa" and body["route"] == "rag"


def test_stream_runs_a_task(api):
    events = api.stream("/chat/stream", {"query": "compare lease 2023 and lease 2024", "index": "kb",
                                         "task": "auto", "backend": "extractive"})
    names = [e for e, _ in events]
    assert names[:2] == ["analyze", "task_resolved"] and names[-2:] == ["inspector", "complete"]
    assert events[-1][1]["task"] == "compare" and events[-1][1]["inspector"]["kind"] == "compare"
    # The table streams a column per document: each part's table so far, the last one the answer.
    tables = [data["markdown"] for name, data in events if name == "task_part"]
    assert len(tables) == 2 and tables[0] != tables[1]
    assert tables[0].splitlines()[2].count("|") == 3 and tables[1].splitlines()[2].count("|") == 4
    assert tables[-1] == events[-1][1]["answer"]


@pytest.mark.parametrize("body, code", [
    ({"task": "translate"}, "invalid_task"),
    ({"task": "qa", "documents": ["the NDA"]}, "invalid_option"),
    ({"task": "summary", "documents": ["a", "b"]}, "invalid_option"),
    ({"task": "compare", "documents": ["a"]}, "invalid_option"),
    ({"task": "compare", "documents": "the NDA"}, "invalid_option"),
])
def test_bad_task_requests_are_400(api, body, code):
    status, payload = chat(api, query="x", **body)
    assert status == 400 and payload["code"] == code, payload


def test_filename_shortcut_scopes_a_question(api):
    status, body = chat(api, query="In the NDA, how long does the agreement remain in effect?")
    assert status == 200, body
    assert body["document_scope"]["documents"][0]["document_name"] == "07_nda.txt"
    assert {s["document_name"] for s in body["source_documents"]} == {"07_nda.txt"}
    assert "document_scope" in [s["type"] for s in body["steps"]]
    status, loose = chat(api, query="In the lease, what is the rent?")  # ambiguous: not scoped
    assert loose["document_scope"] is None


def test_answer_and_retrieve_carry_the_inspector(api):
    status, body = chat(api, query="What is the monthly rent for the 2024 lease?")
    inspector = body["inspector"]
    assert inspector["queries"] == ["What is the monthly rent for the 2024 lease?"]
    search = inspector["searches"][0]
    assert set(search["legs"]) >= {"vector", "fts"}
    for leg in search["legs"].values():
        assert [e["rank"] for e in leg] == list(range(1, len(leg) + 1)) and all(e["score"] is not None for e in leg)
    assert search["fused"][0]["rank"] == 1 and inspector["packed"]["blocks"]
    assert inspector["validation"]["final"]["valid"] and inspector["validation"]["answer_source"] == "extractive"
    assert "inspector" in [s["type"] for s in body["steps"]]
    status, _, retrieved = api.call("POST", "/retrieve", {"index": "kb", "query": "parking bays"})
    assert status == 200
    top = retrieved["inspector"]["legs"]["vector"][0]
    assert top["rank"] == 1 and top["document_name"] == "lease-2024.md"


def _cli(args: list[str], data_dir: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, DOCENT_DATA_DIR=str(data_dir), OLLAMA_HOST="http://127.0.0.1:9", HF_HUB_OFFLINE="1")
    return subprocess.run([sys.executable, "-m", "rag_system", *args, "--index", "kb", "--backend", "extractive"],
                          cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=600)


def test_cli_summarize_and_compare(api):
    done = _cli(["summarize", "the NDA", "--json"], api.data_dir)
    assert done.returncode == 0, done.stderr
    body = json.loads(done.stdout)
    assert body["task"] == "summary" and body["validation"]["valid"]
    assert_citations_true(body)
    done = _cli(["compare", "lease 2023", "lease 2024"], api.data_dir)
    assert done.returncode == 0, done.stderr
    assert "| Dimension | lease-2023.md | lease-2024.md |" in done.stdout and "$4,900" in done.stdout
    done = _cli(["compare", "lease 2023"], api.data_dir)
    assert done.returncode == 2 and "2 to 4 documents" in done.stderr


@pytest.mark.parametrize("message", ["What is this about?", "Summarize this", "Give me an overview"])
def test_a_summary_without_a_name_over_several_documents_is_a_cited_overview(api, message):  # type: ignore[no-untyped-def]
    status, payload = chat(api, query=message)  # the default task (qa): what a person types first
    assert status == 200 and payload["route"] == "task" and payload["task"] == "overview", payload
    assert payload["answer"].startswith("**Overview of 3 documents**")
    assert {c["document_name"] for c in payload["citations"]} == set(DOCS)  # every document, each cited
    assert_citations_true(payload)


def test_a_summary_without_a_name_of_the_one_document_in_scope(api):  # type: ignore[no-untyped-def]
    nda = [d for d in chat(api, query="What is this about?")[1]["documents"] if d["document_name"] == "07_nda.txt"][0]
    status, payload = chat(api, query="What is this about?", filters={"document_id": nda["document_id"]})
    assert status == 200 and payload["task"] == "summary" and payload["answer"].startswith("**Summary of 07_nda.txt**")
    assert {c["document_name"] for c in payload["citations"]} == {"07_nda.txt"}
    assert_citations_true(payload)
    # a question that only starts like one is still a question
    status, payload = chat(api, query="What is this agreement's notice period about?")
    assert payload["route"] == "rag" and payload.get("task") == "qa"
