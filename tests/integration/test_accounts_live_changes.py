"""Accounts changing while both services run: turning them on, revoking, and index names a user cannot read.

Both services start on an empty data directory (single-user mode, no secret). The first user is then
made with the real `python -m backend create-user` CLI while they run: the RAG API must refuse a
request without a grant from then on, with no restart, and still serve the gateway and grants. With
the default settings (`DOCENT_GRANT_CHECK_S=0`) the RAG API asks the gateway for the user's revocation
epoch on every grant, so "the next request after a revocation is refused" holds exactly, and is
tested so; eval/grant_revocation.py measures the window a positive setting opens.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from testkit.accounts import LoginClient, create_user
from testkit.client import Client, Reply
from testkit.processes import GatewayProcess, RagApiProcess, linked_services
from testkit.stack import wait_build

pytestmark = pytest.mark.slow

PASSWORDS = {"root": "root-password-333", "ann": "ann-password-1", "bob": "bob-password-22"}


@dataclass
class Live:
    gw: GatewayProcess
    rag: RagApiProcess
    data: Any
    clients: dict[str, LoginClient] = field(default_factory=dict)
    made: bool = False

    def users(self) -> None:
        """root (with the CLI, as an operator would), then ann and bob; each test may run alone."""
        if self.made:
            return
        self.made = True
        create_user(self.data, "root", "admin", PASSWORDS["root"])
        root = self.login("root")
        for name in ("ann", "bob"):
            made = root.post("/admin/users", {"username": name, "role": "editor", "password": PASSWORDS[name]})
            assert made.status == 201, made.body

    def login(self, name: str) -> LoginClient:
        self.users()
        if name not in self.clients:
            client = LoginClient(self.gw.url)
            assert client.login(name, PASSWORDS[name]).status == 200
            self.clients[name] = client
        return self.clients[name]


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    data = tmp_path_factory.mktemp("live") / "data"
    data.mkdir(parents=True)
    with linked_services(data) as (gw, rag):  # the default DOCENT_GRANT_CHECK_S
        yield Live(gw, rag, data)


def _grant(client: LoginClient, **body: Any) -> str:
    reply = client.post("/auth/rag-token", body)
    assert reply.status == 200, reply.body
    return str(reply.json["token"])


def _rag(live: Live, token: str, method: str, path: str, body: Any = None) -> Reply:
    return Client(live.rag.url, token).call(method, path, body)


def test_creating_the_first_user_turns_the_running_rag_api_to_grants_without_a_restart(live: Live) -> None:
    assert _rag(live, "", "GET", "/indexes").status == 200  # single-user mode: as before accounts
    live.users()  # the first user comes from `python -m backend create-user` while both run
    refused = _rag(live, "", "GET", "/indexes")
    assert refused.status == 401 and refused.json["code"] == "unauthorized", refused.body
    root = live.login("root")
    iid = root.post("/indexes", {"name": "Root's"}).json["index_id"]
    grant = _grant(root, indexes=[iid], purpose="progress")
    listed = _rag(live, grant, "GET", "/indexes")
    assert listed.status == 200, listed.body  # the RAG API knows the new secret
    assert _rag(live, "junk", "GET", "/indexes").status == 401
    # the gateway reaches the RAG API with the service token derived from the new secret
    assert root.get("/health").status == 200
    assert root.get(f"/indexes/{iid}").status == 200


def test_a_removed_share_refuses_the_grant_already_issued_on_its_next_request(live: Live) -> None:
    ann, bob = live.login("ann"), live.login("bob")
    iid = ann.post("/indexes", {"name": "Ann's shared"}).json["index_id"]
    assert ann.post(f"/indexes/{iid}/shares", {"user": "bob", "access": "read"}).status == 200
    grant = _grant(bob, indexes=[iid], purpose="progress")  # valid for DOCENT_RAG_GRANT_TTL_S (120 s)
    assert _rag(live, grant, "GET", "/indexes").status == 200
    assert ann.delete(f"/indexes/{iid}/shares/bob").json["removed"] is True
    after = _rag(live, grant, "GET", "/indexes")
    assert after.status == 401 and after.json["code"] == "grant_revoked", after.body
    assert iid not in after.body.decode()


def test_a_share_with_everyone_removed_refuses_every_grant_issued_before(live: Live) -> None:
    ann, bob = live.login("ann"), live.login("bob")
    iid = ann.post("/indexes", {"name": "Ann's for all"}).json["index_id"]
    assert ann.post(f"/indexes/{iid}/shares", {"user": "everyone", "access": "read"}).status == 200
    grant = _grant(bob, indexes=[iid], purpose="progress")
    assert _rag(live, grant, "GET", "/indexes").status == 200
    assert ann.delete(f"/indexes/{iid}/shares/everyone").json["removed"] is True
    assert _rag(live, grant, "GET", "/indexes").json["code"] == "grant_revoked"
    fresh = bob.post("/auth/rag-token", {"indexes": [iid]})
    assert fresh.status == 403 and fresh.json["code"] == "index_forbidden"


def test_a_disabled_user_s_grant_is_refused_on_its_next_request(live: Live) -> None:
    root = live.login("root")
    create = root.post("/admin/users", {"username": "dan", "role": "viewer", "password": "dan-password-4444"})
    assert create.status == 201, create.body
    dan = LoginClient(live.gw.url)
    assert dan.login("dan", "dan-password-4444").status == 200
    grant = _grant(dan, indexes=[], purpose="progress")
    assert _rag(live, grant, "GET", "/indexes").status == 200
    assert root.post(f"/admin/users/{create.json['user']['id']}", {"disabled": True}).status == 200
    after = _rag(live, grant, "GET", "/indexes")
    assert after.status == 401 and after.json["code"] == "grant_revoked", after.body


def test_a_grant_is_service_only_when_asking_for_an_epoch(live: Live) -> None:
    bob = live.login("bob")
    asked = bob.get(f"/auth/epoch?user={bob.user['id']}")
    assert asked.status == 403 and asked.json["code"] == "service_only"


def test_index_display_names_resolve_only_among_the_indexes_the_grant_may_read(live: Live) -> None:
    ann, bob = live.login("ann"), live.login("bob")
    ann_ids = [ann.post("/indexes", {"name": name}).json["index_id"] for name in ("Ann twin", "Ann twin", "Notes")]
    mine = bob.post("/indexes", {"name": "Notes"}).json["index_id"]
    assert bob.upload(f"/indexes/{mine}/upload", [("bob.md", b"# Bob\n\nBob keeps his notes here.\n")]).status == 200
    assert wait_build(bob, mine)["state"] == "done"
    grant = _grant(bob, indexes=[mine])
    hidden = _rag(live, grant, "POST", "/retrieve", {"query": "notes", "index": "Ann twin"})
    assert hidden.status in (400, 403), hidden.body
    assert hidden.json["code"] != "ambiguous_index_name", hidden.body
    shared = _rag(live, grant, "POST", "/retrieve", {"query": "notes", "index": "Notes"})
    assert shared.status == 200, shared.body  # Ann's "Notes" is not Bob's to be confused with
    assert shared.json["index"] == mine
    for reply in (hidden, shared):
        assert not any(i in reply.body.decode() for i in ann_ids), reply.body
