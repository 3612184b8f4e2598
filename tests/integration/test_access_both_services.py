"""Two users, both real services: B reaches none of A's private sessions, indexes, documents or jobs.

Every route of both route tables is tried as B with A's ids (the list is generated from
`backend.routes.ALL_ROUTES` and `rag_system.api.routes.ROUTES`, so a route added later is tried
too); a route naming one of A's things must answer 403, a route naming none must not show any of
A's ids or text. Then A shares the index read-only: B may ask (through the RAG API, with a grant)
and open its pages, not upload, build or delete; revoking takes effect on B's next request.
"""

from __future__ import annotations

import http.client
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from backend.routes import ALL_ROUTES
from rag_system.api.routes import ROUTE_ACCESS, ROUTES
from testkit.accounts import LoginClient, create_user
from testkit.client import Client, read_events
from testkit.docs import make_pdf
from testkit.processes import GatewayProcess, RagApiProcess, linked_services
from testkit.stack import wait_build

pytestmark = pytest.mark.slow

PASSWORDS = {"ann": "ann-password-1", "bob": "bob-password-22", "root": "root-password-333"}
SECRET_TEXT = "The vault combination is seven four nine."
QUESTION = "What is the vault combination?"


class Two:
    def __init__(self, gw: GatewayProcess, rag: RagApiProcess) -> None:
        self.gw, self.rag = gw, rag
        self.ann, self.bob = LoginClient(gw.url), LoginClient(gw.url)
        assert self.ann.login("ann", PASSWORDS["ann"]).status == 200
        assert self.bob.login("bob", PASSWORDS["bob"]).status == 200
        self.ids: dict[str, str] = {}


@pytest.fixture(scope="module")
def two(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Two]:
    data = tmp_path_factory.mktemp("two") / "data"
    create_user(data, "root", "admin", PASSWORDS["root"])
    create_user(data, "ann", "editor", PASSWORDS["ann"])
    create_user(data, "bob", "editor", PASSWORDS["bob"])
    with linked_services(data) as (gw, rag):
        t = Two(gw, rag)
        pdf = make_pdf(data.parent / "vault.pdf")
        iid = t.ann.post("/indexes", {"name": "Ann private"}).json["index_id"]
        up = t.ann.upload(f"/indexes/{iid}/upload", [("vault.md", f"# Vault\n\n{SECRET_TEXT}\n".encode()),
                                                       ("vault.pdf", pdf.read_bytes())])
        assert up.status == 200, up.body
        job = wait_build(t.ann, iid)
        assert job["state"] == "done", job
        sid = t.ann.post("/sessions", {"title": "Ann's chat"}).json["session_id"]
        assert t.ann.post(f"/sessions/{sid}/indexes/{iid}").status == 200
        asked = t.ann.post(f"/sessions/{sid}/messages", {"message": QUESTION})
        assert asked.status == 200, asked.body
        token = t.ann.post("/auth/tokens", {"name": "ann script"}).json
        docs = {d["filename"]: d for d in t.ann.get(f"/indexes/{iid}").json["documents"]}
        t.ids = {"session_id": sid, "index_id": iid, "document_id": docs["vault.pdf"]["id"], "page": "1",
                 "job_id": job["job_id"], "token_id": token["id"], "user_id": t.ann.user["id"],
                 "grantee": t.bob.user["id"], "name": iid, "ann_token": token["token"],
                 "message_id": asked.json["ai_message_id"]}
        yield t


def _path(pattern: str, ids: dict[str, str]) -> str:
    return re.sub(r"\{(\w+)\}", lambda m: ids[m.group(1)], pattern)


#: Gateway routes that would change B's own state in a way later checks need left alone.
_SKIP = {("POST", "/auth/logout")}
_RESOURCE_PARAMS = {"session_id", "index_id", "document_id", "message_id"}


def _leaks(body: bytes, ids: dict[str, str]) -> list[str]:
    text = body.decode(errors="replace")
    return [k for k in ("session_id", "index_id", "document_id", "job_id") if ids[k] in text] + \
        (["secret text"] if "seven four nine" in text else [])


def test_every_gateway_route_refuses_b_on_a_private_things(two: Two) -> None:
    tried, failures = 0, []
    for route in ALL_ROUTES:
        if (route.method, route.pattern) in _SKIP or route.pattern in ("/health", "/auth/login"):
            continue
        path = _path(route.pattern, two.ids)
        body = {"message": QUESTION, "title": "x", "name": "x", "user": "bob", "access": "read", "query": QUESTION,
                "messages": [{"role": "user", "content": QUESTION}]}
        if route.pattern.startswith("/v1/"):  # the OpenAI door names the index in the model
            body["model"] = f"docent/{two.ids['index_id']}"
        reply = two.bob.call(route.method, path, None if route.method in ("GET", "DELETE") else body)
        tried += 1
        names = set(re.findall(r"\{(\w+)\}", route.pattern))
        if names & _RESOURCE_PARAMS:
            if reply.status != 403:
                failures.append(f"{route.method} {route.pattern}: {reply.status} {reply.body[:160]!r}")
        elif reply.status >= 500 or (reply.status < 400 and _leaks(reply.body, two.ids)):
            failures.append(f"{route.method} {route.pattern}: {reply.status} leaks {_leaks(reply.body, two.ids)}")
    assert tried >= 45 and not failures, "\n".join(failures)
    # nothing of A's was changed by all that
    assert two.ann.get(f"/sessions/{two.ids['session_id']}").status == 200
    assert two.ann.get(f"/indexes/{two.ids['index_id']}").json["document_count"] == 2
    assert Client(two.gw.url, two.ids["ann_token"]).get("/auth/me").status == 200


def _grant(client: LoginClient, **body: Any) -> str:
    reply = client.post("/auth/rag-token", body)
    assert reply.status == 200, reply.body
    return reply.json["token"]


def _stream(rag: RagApiProcess, token: str, body: dict[str, Any]) -> tuple[int, list[tuple[str, Any]], Any]:
    conn = http.client.HTTPConnection("127.0.0.1", rag.port, timeout=180)
    conn.request("POST", "/chat/stream", body=json.dumps(body),
                 headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"})
    resp = conn.getresponse()
    try:
        if resp.status != 200:
            return resp.status, [], json.loads(resp.read() or b"{}")
        return 200, list(read_events(resp)), None
    finally:
        conn.close()


def test_every_rag_api_route_refuses_b_on_a_private_index(two: Two) -> None:
    iid = two.ids["index_id"]
    refused = two.bob.post("/auth/rag-token", {"indexes": [iid]})
    assert refused.status == 403 and refused.json["code"] == "index_forbidden"
    assert two.bob.post("/auth/rag-token", {"session_id": two.ids["session_id"]}).json["code"] == "session_forbidden"
    mine = two.bob.post("/sessions", {"title": "Bob's"}).json["session_id"]
    api = Client(two.rag.url, _grant(two.bob, session_id=mine, indexes=[]))
    body = {"query": QUESTION, "index": iid, "indexes": [iid], "session_id": mine, "paths": [], "folder": "/tmp"}
    failures = []
    for route in ROUTES:
        if route.public:
            continue
        reply = api.call(route.method, _path(route.pattern, two.ids),
                         None if route.method in ("GET", "DELETE") else body)
        if "{" in route.pattern or route.method == "POST" or ROUTE_ACCESS[(route.method, route.pattern)] == "service":
            if reply.status != 403:
                failures.append(f"{route.method} {route.pattern}: {reply.status} {reply.body[:160]!r}")
        elif reply.status >= 400 or _leaks(reply.body, two.ids):
            failures.append(f"{route.method} {route.pattern}: {reply.status} leaks {_leaks(reply.body, two.ids)}")
    assert not failures, "\n".join(failures)
    status, _, error = _stream(two.rag, api.token, {"query": QUESTION, "table_name": f"text_pages_{iid}"})
    assert status == 403 and error["code"] == "index_forbidden"
    status, _, error = _stream(two.rag, api.token, {"query": QUESTION, "session_id": two.ids["session_id"]})
    assert status == 403 and error["code"] == "session_forbidden"
    # no grant, a forged grant, the gateway's grant for another purpose: all refused
    assert Client(two.rag.url).get("/indexes").status == 401
    forged = api.token.split(".")
    forged[1] = forged[1][:-2] + ("AA" if not forged[1].endswith("AA") else "BB")
    assert Client(two.rag.url, ".".join(forged)).get("/indexes").json["code"] == "invalid_grant"


def test_a_read_share_lets_b_ask_but_not_change_and_revoking_is_immediate(two: Two) -> None:
    iid, doc = two.ids["index_id"], two.ids["document_id"]
    assert two.ann.post(f"/indexes/{iid}/shares", {"user": "bob", "access": "read"}).status == 200
    assert iid in {i["id"] for i in two.bob.get("/indexes").json["indexes"]}
    mine = two.bob.post("/sessions", {"title": "Bob asks Ann's"}).json["session_id"]
    grant = _grant(two.bob, session_id=mine, indexes=[iid])
    status, events, error = _stream(two.rag, grant, {"query": QUESTION, "indexes": [iid], "session_id": mine})
    assert status == 200, error
    complete = [d for k, d in events if k == "complete"]
    assert complete and "seven four nine" in complete[-1]["answer"].lower()
    assert two.bob.get(f"/documents/{doc}/pages/1.png").status == 200
    assert two.bob.post(f"/sessions/{mine}/indexes/{iid}").status == 200
    assert [i["id"] for i in two.bob.get(f"/sessions/{mine}/indexes").json["indexes"]] == [iid]
    assert two.bob.post(f"/sessions/{mine}/messages", {"message": QUESTION}).status == 200
    for method, path in (("POST", f"/indexes/{iid}/upload"), ("POST", f"/indexes/{iid}/build"),
                         ("DELETE", f"/indexes/{iid}"), ("POST", f"/indexes/{iid}/shares")):
        reply = two.bob.upload(path, [("x.md", b"# x")]) if path.endswith("upload") else \
            two.bob.call(method, path, {"user": "bob", "access": "write"} if method == "POST" else None)
        assert reply.status == 403, (method, path, reply.body)
        assert reply.json["code"] in ("index_read_only", "index_owner_only"), reply.body
    # revoke: B's very next request is refused, through either service
    assert two.ann.delete(f"/indexes/{iid}/shares/bob").json["removed"] is True
    assert two.bob.get(f"/indexes/{iid}").json["code"] == "index_forbidden"
    assert two.bob.get(f"/sessions/{mine}/indexes").json["indexes"] == []  # linked, but no longer shown
    assert two.bob.get(f"/documents/{doc}/pages/1.png").status == 403
    assert two.bob.post("/auth/rag-token", {"session_id": mine, "indexes": [iid]}).status == 403
    assert two.bob.post(f"/sessions/{mine}/messages", {"message": QUESTION}).json["code"] == "index_forbidden"
    fresh = _grant(two.bob, session_id=mine, indexes=[])
    status, _, error = _stream(two.rag, fresh, {"query": QUESTION, "indexes": [iid], "session_id": mine})
    assert status == 403 and error["code"] == "index_forbidden"


def test_localgpt_routes_work_for_a_logged_in_user_and_for_a_bearer_token(two: Two) -> None:
    for client in (two.ann, Client(two.gw.url, two.ids["ann_token"])):
        sessions = client.get("/sessions").json
        assert two.ids["session_id"] in {s["id"] for s in sessions["sessions"]}
        sid = client.post("/sessions", {"title": "New Chat"}).json["session_id"]
        assert client.get(f"/sessions/{sid}").json["session"]["id"] == sid
        assert client.get("/models").status == 200
        assert client.post(f"/sessions/{sid}/rename", {"title": "Renamed"}).status == 200
        assert client.post(f"/sessions/{sid}/indexes/{two.ids['index_id']}").status == 200
        answer = client.post(f"/sessions/{sid}/messages", {"message": QUESTION})
        assert answer.status == 200 and "seven four nine" in answer.json["response"].lower()
        assert client.get(f"/indexes/{two.ids['index_id']}").json["id"] == two.ids["index_id"]
        assert client.delete(f"/sessions/{sid}").status == 200
    grant = _grant(two.ann, session_id=two.ids["session_id"])  # the session's own indexes
    status, events, error = _stream(two.rag, grant, {"query": QUESTION, "session_id": two.ids["session_id"],
                                                     "table_name": f"text_pages_{two.ids['index_id']}"})
    assert status == 200, error
    assert [k for k, _ in events][-1] == "complete"


def test_chats_uploads_builds_shares_and_deletes_are_audited(two: Two, tmp_path: Path) -> None:
    root = LoginClient(two.gw.url)
    assert root.login("root", PASSWORDS["root"]).status == 200
    entries = root.get("/admin/audit?limit=500").json["entries"]
    by_action: dict[str, list[dict[str, Any]]] = {}
    for entry in entries:
        by_action.setdefault(entry["action"], []).append(entry)
    assert {"upload", "build", "chat", "share", "unshare", "delete", "login"} <= set(by_action)
    chats = [e for e in by_action["chat"] if e["actor"] == "ann"]
    assert any(two.ids["index_id"] in e["detail"].get("indexes", []) for e in chats)
    assert all(e["address"] == "127.0.0.1" for e in by_action["login"])
    log = two.gw.log() + two.rag.log()
    for secret in (*PASSWORDS.values(), two.ids["ann_token"], two.ann.csrf):
        assert secret not in log
    assert "dg1." not in log
