"""`POST /verify` through the gateway, both services real, accounts on: the indexes the caller may read.

Ann owns an index of the shared Northwind leave policy (a real PDF); Bob may not read it until Ann
shares it. Bob's check against it is refused (403) before the RAG API is asked, by id and by display
name; his checks against sources he gives work; a share lets him check, revoking stops him again.
A personal token works like the cookie; the cookie without the CSRF token is refused; on the RAG API
itself a grant must name the index. Bad input passes through as the RAG API's 4xx and stores
nothing: no message, no session, no audit row.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from testkit import EVAL_DATA
from testkit.accounts import LoginClient, create_user
from testkit.client import Client
from testkit.processes import GatewayProcess, RagApiProcess, linked_services
from testkit.stack import wait_build

POLICY = EVAL_DATA / "localgpt" / "corpora" / "northwind_leave_policy.pdf"
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not POLICY.is_file(), reason=f"shared eval data not at {EVAL_DATA}")]

PASSWORDS = {"ann": "ann-password-1", "bob": "bob-password-22", "root": "root-password-333"}
SICK = "Sick leave is paid at 100 percent of base salary for the first 12 weeks of a single absence."
CONTRACTORS = "Contractors engaged through an agency are covered by this policy."
PASSAGE = "Jury service is paid in full for up to 15 working days per calendar year."


class Both:
    def __init__(self, gw: GatewayProcess, rag: RagApiProcess) -> None:
        self.gw, self.rag = gw, rag
        self.ann, self.bob, self.root = LoginClient(gw.url), LoginClient(gw.url), LoginClient(gw.url)
        for name in PASSWORDS:
            assert getattr(self, name).login(name, PASSWORDS[name]).status == 200
        self.index_id = ""


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Both]:
    data = tmp_path_factory.mktemp("gw-verify") / "data"
    for name, role in (("root", "admin"), ("ann", "editor"), ("bob", "viewer")):
        create_user(data, name, role, PASSWORDS[name])
    with linked_services(data) as (gw, rag):
        t = Both(gw, rag)
        t.index_id = t.ann.post("/indexes", {"name": "Leave policy"}).json["index_id"]
        up = t.ann.upload(f"/indexes/{t.index_id}/upload", [(POLICY.name, POLICY.read_bytes())])
        assert up.status == 200, up.body
        assert wait_build(t.ann, t.index_id)["state"] == "done"
        yield t


def _state(t: Both) -> tuple[Any, ...]:
    """What a request could have stored: sessions, messages, indexes and the audit log."""
    sessions = t.root.get("/sessions").json["sessions"]
    audit = t.root.get("/admin/audit?limit=500").json["entries"]
    return (len(sessions), sum(s["message_count"] for s in sessions), t.root.get("/indexes").json["total"],
            len(audit))


def test_the_owner_checks_a_text_against_her_index_by_id_and_by_name(both: Both) -> None:
    for ref in (both.index_id, "leave policy", f"idx_{both.index_id}"):
        reply = both.ann.post("/verify", {"text": f"{SICK} {CONTRACTORS}", "index": ref})
        assert reply.status == 200, reply.body
        sick, contractors = reply.json["sentences"]
        assert reply.json["indexes"] == [both.index_id]
        assert sick["verdict"] == "supported" and contractors["verdict"] == "contradicted"
        evidence = sick["evidence"][0]
        assert evidence["document"] == POLICY.name and evidence["page"] == 2  # the uploaded name, not the stored one
        source = {s["n"]: s for s in reply.json["sources"]}[evidence["n"]]
        assert source["document_name"] == POLICY.name
        page = both.ann.get(f"/documents/{source['document_id']}/pages/{evidence['page']}.png")
        assert page.status == 200 and page.headers["content-type"] == "image/png"  # the client can open the page
    audited = [e for e in both.root.get("/admin/audit?limit=50").json["entries"] if e["action"] == "verify"]
    assert audited and audited[0]["actor"] == "ann" and both.index_id in audited[0]["detail"]["indexes"]


def test_a_user_who_may_not_read_the_index_is_refused_until_it_is_shared(both: Both) -> None:
    before = _state(both)
    for ref in (both.index_id, f"text_pages_{both.index_id}"):
        refused = both.bob.post("/verify", {"text": SICK, "index": ref})
        assert refused.status == 403 and refused.json["code"] == "index_forbidden", refused.body
    hidden = both.bob.post("/verify", {"text": SICK, "indexes": ["Leave policy"]})
    assert hidden.status == 404 and hidden.json["code"] == "index_not_found"
    assert "12 weeks" not in refused.body.decode() + hidden.body.decode()
    assert _state(both) == before  # refused: nothing stored, not even an audit row
    own = both.bob.post("/verify", {"text": f"{PASSAGE[:-1]} [1].", "sources": [{"n": 1, "text": PASSAGE}]})
    assert own.status == 200 and own.json["supported"] is True, own.body

    assert both.ann.post(f"/indexes/{both.index_id}/shares", {"user": "bob", "access": "read"}).status == 200
    shared = both.bob.post("/verify", {"text": SICK, "indexes": ["Leave policy"]})
    assert shared.status == 200 and shared.json["sentences"][0]["verdict"] == "supported", shared.body
    assert both.ann.delete(f"/indexes/{both.index_id}/shares/bob").json["removed"] is True
    again = both.bob.post("/verify", {"text": SICK, "index": both.index_id})
    assert again.status == 403 and again.json["code"] == "index_forbidden"


def test_tokens_and_csrf_like_every_route(both: Both) -> None:
    token = both.ann.post("/auth/tokens", {"name": "verify script"}).json["token"]
    scripted = Client(both.gw.url, token).post("/verify", {"text": SICK, "index": both.index_id})
    assert scripted.status == 200 and scripted.json["supported"] is True, scripted.body
    no_csrf = Client(both.gw.url).call("POST", "/verify", {"text": SICK, "index": both.index_id},
                                       headers={"Cookie": both.ann.cookie})
    assert no_csrf.status == 403, no_csrf.body
    assert Client(both.gw.url).post("/verify", {"text": SICK, "index": both.index_id}).status == 401


def test_the_rag_api_takes_a_grant_for_the_index_and_refuses_one_without_it(both: Both) -> None:
    granted = both.ann.post("/auth/rag-token", {"indexes": [both.index_id]}).json["token"]
    ok = Client(both.rag.url, granted).post("/verify", {"text": CONTRACTORS, "index": both.index_id})
    assert ok.status == 200 and ok.json["sentences"][0]["verdict"] == "contradicted", ok.body
    other = Client(both.rag.url, both.bob.post("/auth/rag-token", {"indexes": []}).json["token"])
    for body in ({"text": SICK, "index": both.index_id}, {"text": "", "indexes": [both.index_id]}):
        refused = other.post("/verify", body)  # refused before the text is judged
        assert refused.status == 403 and refused.json["code"] == "index_forbidden", refused.body
    own = other.post("/verify", {"text": PASSAGE, "sources": [{"n": 1, "text": PASSAGE}]})
    assert own.status == 200 and own.json["supported"] is True


@pytest.mark.parametrize(("body", "status", "code"), [
    ({"text": "", "sources": [{"n": 1, "text": PASSAGE}]}, 400, "missing_text"),
    ({"text": "The cat sat. " * 10_000, "sources": [{"n": 1, "text": PASSAGE}]}, 400, "text_too_long"),
    ({"text": PASSAGE, "sources": [{"n": 1, "text": ""}]}, 400, "invalid_sources"),
    ({"text": f"{PASSAGE} [4]", "sources": [{"n": 1, "text": PASSAGE}]}, 400, "unknown_source"),
    ({"text": PASSAGE, "sources": [{"n": 1, "text": PASSAGE}], "index": "Leave policy"}, 400, "conflicting_option"),
    ({"text": PASSAGE, "index": "no such index"}, 404, "index_not_found"),
    ({"text": PASSAGE, "indexes": "Leave policy"}, 400, "invalid_option"),
])
def test_bad_input_keeps_the_rag_apis_status_and_code_and_stores_nothing(both: Both, body: Any, status: int,
                                                                         code: str) -> None:
    before = _state(both)
    reply = both.ann.post("/verify", body)
    assert (reply.status, reply.json["code"]) == (status, code), reply.body
    assert _state(both) == before
