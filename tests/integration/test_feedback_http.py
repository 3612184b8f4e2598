"""Feedback on answers over real HTTP: rating, changing it, who may, the audit row, the evaluation export.

The gateway runs alone with accounts on (users made with the real CLI); turns are stored the way
the RAG API stores them, through the internal save endpoint with the service token. The export
is then read by `python -m eval.run_answers`'s own loader in a subprocess: rated answers must be
regression rows it accepts.
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from testkit import REPO_ROOT
from testkit.accounts import LoginClient, create_user, logged_in
from testkit.client import Client
from testkit.processes import GatewayProcess, base_env

SERVICE = "feedback-service-token-51c2"
PASSWORDS = {"ann": "ann-secret-pw-1", "ed": "ed-secret-pw-22", "vic": "vic-secret-pw-333"}
QUOTE = "Employees accrue 25 days of annual leave per year."


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GatewayProcess]:
    """The gateway alone, accounts on: an admin, an editor who asks, a viewer who may not read the editor's."""
    data = tmp_path_factory.mktemp("feedback") / "data"
    for name, role in {"ann": "admin", "ed": "editor", "vic": "viewer"}.items():
        create_user(data, name, role, PASSWORDS[name], DOCENT_API_TOKEN=SERVICE)
    gw = GatewayProcess(data, token=SERVICE)
    gw.start(wait_s=30)
    try:
        yield gw
    finally:
        gw.stop()


def login(gw: GatewayProcess, name: str) -> LoginClient:
    return logged_in(gw.url, name, PASSWORDS[name])


def answered_turn(gw: GatewayProcess, owner: LoginClient, question: str, answer: str,
                  citations: list[dict[str, Any]]) -> tuple[str, str, str]:
    """A conversation of `owner` with one answered turn, saved as the RAG API saves it: (session, question id, answer id)."""
    sid = owner.post("/sessions", {"title": "rated"}).json["session_id"]
    saved = Client(gw.url, SERVICE).post(f"/sessions/{sid}/messages/save", {
        "turn_id": uuid.uuid4().hex, "question": question, "answer": answer, "answer_source": "extractive",
        "citations": citations, "status": "complete", "indexes": ["idx-1"], "options": {"retrieval_k": 20}})
    assert saved.status == 201, saved.body
    return sid, saved.json["user_message_id"], saved.json["ai_message_id"]


CITATION = {"n": 1, "chunk_id": "c1", "document_id": "d" * 64, "document_name": "policy.md",
            "page_start": 1, "page_end": 1, "quote": QUOTE}


def test_a_rating_is_given_changed_and_kept_with_the_turn(gateway: GatewayProcess) -> None:
    ed = login(gateway, "ed")
    sid, _, aid = answered_turn(gateway, ed, "How much annual leave?", f"{QUOTE} [1]", [CITATION])
    first = ed.post(f"/messages/{aid}/feedback", {"rating": "up"})
    assert first.status == 200 and first.json["feedback"]["rating"] == "up" and first.json["changed"] is False
    second = ed.post(f"/messages/{aid}/feedback", {"rating": "down", "comment": "  should say 30 days  "})
    assert second.status == 200 and second.json["changed"] is True
    assert second.json["feedback"] == {**second.json["feedback"], "rating": "down", "comment": "should say 30 days"}
    # one rating per person and answer: the reload shows the changed one
    answer = [m for m in ed.get(f"/sessions/{sid}").json["messages"] if m["id"] == aid][0]
    assert answer["feedback"]["rating"] == "down" and answer["feedback"]["comment"] == "should say 30 days"
    rows = [f for f in login(gateway, "ann").get("/feedback").json["feedback"] if f["message_id"] == aid]
    assert len(rows) == 1 and rows[0]["turn"]["question"] == "How much annual leave?"
    assert rows[0]["turn"]["citations"][0]["quote"] == QUOTE and rows[0]["turn"]["indexes"] == ["idx-1"]
    assert rows[0]["turn"]["options"] == {"retrieval_k": 20} and rows[0]["turn"]["answer_source"] == "extractive"
    audit = login(gateway, "ann").get("/admin/audit?limit=50").json["entries"]
    rated = [e for e in audit if e["action"] == "feedback" and e["target"] == aid]
    assert [e["detail"]["rating"] for e in rated] == ["down", "up"] and all(e["actor"] == "ed" for e in rated)


def test_bad_ratings_are_clear_4xx_and_change_nothing(gateway: GatewayProcess) -> None:
    ed, vic = login(gateway, "ed"), login(gateway, "vic")
    _, qid, aid = answered_turn(gateway, ed, "What is the notice period?", f"{QUOTE} [1]", [CITATION])
    assert ed.post(f"/messages/{aid}/feedback", {"rating": "up"}).status == 200
    cases = [
        (ed, f"/messages/{uuid.uuid4().hex}/feedback", {"rating": "up"}, 404, "message_not_found"),
        (vic, f"/messages/{aid}/feedback", {"rating": "down"}, 403, "message_forbidden"),
        (ed, f"/messages/{aid}/feedback", {"rating": "meh"}, 400, "invalid_field"),
        (ed, f"/messages/{aid}/feedback", {"rating": None}, 400, "invalid_field"),
        (ed, f"/messages/{aid}/feedback", {"rating": "down", "comment": 5}, 400, "invalid_field"),
        (ed, f"/messages/{aid}/feedback", {"rating": "down", "comment": "x" * 2001}, 400, "invalid_field"),
        (ed, f"/messages/{qid}/feedback", {"rating": "down"}, 400, "not_an_answer"),
    ]
    for client, path, body, status, code in cases:
        reply = client.post(path, body)
        assert (reply.status, reply.json["code"]) == (status, code), (body, reply.body)
    assert ed.post(f"/messages/{aid}/feedback", raw=b"{not json", headers={"Content-Type": "application/json"}
                   ).json["code"] == "invalid_json"
    mine = [f for f in login(gateway, "ann").get("/feedback").json["feedback"] if f["message_id"] == aid]
    assert [(f["rating"], f["comment"]) for f in mine] == [("up", "")]
    assert vic.get("/feedback").status == 403  # the export is an admin's


def test_the_export_is_rows_eval_run_answers_reads(gateway: GatewayProcess, tmp_path: Path) -> None:
    ed = login(gateway, "ed")
    _, _, up = answered_turn(gateway, ed, "How many days of leave?", f"{QUOTE} [1]", [CITATION])
    _, _, down = answered_turn(gateway, ed, "What is the sick pay?", "Not in the documents.", [])
    _, _, silent = answered_turn(gateway, ed, "Who approves leave?", "A manager.", [])
    ed.post(f"/messages/{up}/feedback", {"rating": "up"})
    ed.post(f"/messages/{down}/feedback", {"rating": "down", "comment": "sick pay is 80% of salary"})
    ed.post(f"/messages/{silent}/feedback", {"rating": "down"})  # nothing to check: counted, not exported
    reply = login(gateway, "ann").get("/feedback?format=jsonl")
    assert reply.status == 200 and reply.headers["content-type"].startswith("application/x-ndjson")
    rows = {r["message_id"]: r for r in map(json.loads, reply.body.decode().splitlines())}
    assert rows[up]["query"] == "How many days of leave?" and rows[up]["expected"] == [QUOTE]
    assert rows[up]["cited_chunks"][0]["chunk_id"] == "c1" and rows[up]["rating"] == "up"
    assert rows[down]["expected"] == ["sick pay is 80% of salary"] and rows[down]["rating"] == "down"
    assert silent not in rows and int(reply.headers["x-docent-skipped"]) >= 1
    assert login(gateway, "ann").get("/feedback?format=csv").json["code"] == "invalid_field"
    gold = tmp_path / "feedback.jsonl"
    gold.write_bytes(reply.body)
    loaded = subprocess.run([sys.executable, "-c", "import sys; from pathlib import Path; "
                             "from eval.corpora import load_gold; "
                             "print(len(load_gold((Path(sys.argv[1]),))))", str(gold)],
                            capture_output=True, text=True, cwd=REPO_ROOT, env=base_env(tmp_path), check=False)
    assert loaded.returncode == 0, loaded.stderr
    assert int(loaded.stdout) == len(rows)
