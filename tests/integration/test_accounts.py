"""Accounts on the gateway over real HTTP: login, CSRF, API tokens, roles, lockout, rate limits, audit.

The gateway runs alone here (the RAG API is not needed for any of it); users are made with the
real `python -m backend create-user` CLI, as an operator would. What both services enforce together
is tests/integration/test_access_both_services.py.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from testkit import REPO_ROOT
from testkit.accounts import LoginClient, create_user
from testkit.client import Client
from testkit.processes import GatewayProcess, base_env

PASSWORDS = {"ann": "ann-secret-pw-1", "ed": "ed-secret-pw-22", "vic": "vic-secret-pw-333",
             "lou": "lou-secret-pw-4444", "bea": "bea-secret-pw-55555"}
COOL_DOWN_S = 3


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GatewayProcess]:
    data = tmp_path_factory.mktemp("accounts") / "data"
    for name, role in (("ann", "admin"), ("ed", "editor"), ("vic", "viewer"), ("lou", "viewer"),
                       ("bea", "viewer")):  # bea: only the lockout test logs in as her, so no other failure counts
        create_user(data, name, role, PASSWORDS[name])
    gw = GatewayProcess(data, DOCENT_LOCKOUT_S=str(COOL_DOWN_S), DOCENT_LOCKOUT_ATTEMPTS="10",
                        DOCENT_LOCKOUT_ADDRESS_ATTEMPTS="100000", DOCENT_RATE_CHAT_PER_MIN="3")
    gw.start(wait_s=30)
    yield gw
    gw.stop()


def login(gw: GatewayProcess, name: str) -> LoginClient:
    client = LoginClient(gw.url)
    assert client.login(name, PASSWORDS[name]).status == 200
    return client


def test_without_login_everything_but_health_and_status_is_401(gateway: GatewayProcess) -> None:
    anon = Client(gateway.url)
    assert anon.get("/health").status == 200
    assert anon.get("/auth/status").json == {"accounts": True, "user": None}
    for path in ("/sessions", "/indexes", "/models", "/auth/me", "/admin/audit"):
        reply = anon.get(path)
        assert reply.status == 401, path
        assert reply.json["code"] == "login_required"
    assert Client(gateway.url, "not-a-token").get("/sessions").json["code"] == "unauthorized"


def test_login_sets_an_httponly_strict_cookie_and_answers_the_csrf_token(gateway: GatewayProcess) -> None:
    client = LoginClient(gateway.url)
    reply = client.login("ann", PASSWORDS["ann"])
    assert reply.status == 200
    cookie = reply.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie
    assert set(reply.json) == {"user", "csrf_token"}
    assert reply.json["user"]["username"] == "ann" and reply.json["user"]["role"] == "admin"
    assert "password" not in str(reply.json) and "argon2" not in str(reply.json)
    me = client.get("/auth/me").json
    assert me["user"]["username"] == "ann" and me["csrf_token"] == client.csrf and me["via"] == "cookie"
    assert client.get("/auth/status").json["user"]["username"] == "ann"


def test_wrong_password_and_unknown_user_look_the_same(gateway: GatewayProcess) -> None:
    anon = Client(gateway.url)
    wrong = anon.post("/auth/login", {"username": "lou", "password": "nope-nope"})
    unknown = anon.post("/auth/login", {"username": "nobody-here", "password": "nope-nope"})
    assert wrong.status == unknown.status == 401
    assert wrong.json == unknown.json and wrong.json["code"] == "invalid_credentials"
    assert anon.post("/auth/login", {"username": "lou"}).status == 400


def test_a_cookie_change_needs_the_csrf_header(gateway: GatewayProcess) -> None:
    client = login(gateway, "ed")
    no_header = client.call("POST", "/sessions", {"title": "forged"}, headers={"X-CSRF-Token": ""})
    assert no_header.status == 403 and no_header.json["code"] == "csrf_failed"
    wrong = client.call("POST", "/sessions", {"title": "forged"}, headers={"X-CSRF-Token": "guess"})
    assert wrong.status == 403
    assert client.post("/sessions", {"title": "mine"}).status == 201
    assert client.get("/sessions").status == 200  # reads need no header


def test_personal_api_tokens_are_shown_once_stored_hashed_and_revocable(gateway: GatewayProcess) -> None:
    client = login(gateway, "ed")
    made = client.post("/auth/tokens", {"name": "nightly script"})
    assert made.status == 201 and made.json["token"].startswith("dpt_")
    secret = made.json["token"]
    script = Client(gateway.url, secret)
    assert script.post("/sessions", {"title": "from a script"}).status == 201  # no CSRF with a bearer
    assert script.get("/auth/me").json["user"]["username"] == "ed"
    listed = client.get("/auth/tokens").json["tokens"]
    assert [t["name"] for t in listed if t["id"] == made.json["id"]] == ["nightly script"]
    assert secret not in str(listed)
    db = sqlite3.connect(gateway.env["DOCENT_DATA_DIR"] + "/docent.db")
    assert secret not in str(db.execute("SELECT * FROM api_tokens").fetchall())
    db.close()
    other = login(gateway, "vic")
    assert other.delete(f"/auth/tokens/{made.json['id']}").status == 404  # not vic's
    assert client.delete(f"/auth/tokens/{made.json['id']}").status == 200
    assert script.get("/sessions").status == 401


def test_roles(gateway: GatewayProcess) -> None:
    viewer, editor, admin = login(gateway, "vic"), login(gateway, "ed"), login(gateway, "ann")
    refused = viewer.post("/indexes", {"name": "viewer's"})
    assert refused.status == 403 and refused.json["code"] == "role_forbidden"
    made = editor.post("/indexes", {"name": "Editor's manuals"})
    assert made.status == 201
    iid = made.json["index_id"]
    assert viewer.get(f"/indexes/{iid}").json["code"] == "index_forbidden"
    assert iid not in str(viewer.get("/indexes").json)
    assert viewer.get("/admin/users").status == 403 and editor.get("/admin/audit").status == 403
    assert admin.get(f"/indexes/{iid}").status == 200  # an admin sees everything
    assert {u["username"] for u in admin.get("/admin/users").json["users"]} >= {"ann", "ed", "vic", "lou"}
    assert viewer.post(f"/indexes/{iid}/shares", {"user": "vic", "access": "write"}).status == 403
    assert editor.post(f"/indexes/{iid}/shares", {"user": "vic", "access": "write"}).status == 200
    assert viewer.get(f"/indexes/{iid}").status == 200
    # a write share does not make a viewer an editor
    assert viewer.upload(f"/indexes/{iid}/upload", [("a.txt", b"hello")]).json["code"] == "role_forbidden"


def test_an_admin_creates_and_disables_users_and_a_disabled_user_is_out_at_once(gateway: GatewayProcess) -> None:
    admin = login(gateway, "ann")
    made = admin.post("/admin/users", {"username": "temp", "role": "viewer", "password": "temp-password-1"})
    assert made.status == 201 and "password" not in str(made.json)
    assert admin.post("/admin/users", {"username": "temp", "role": "viewer",
                                       "password": "temp-password-1"}).status == 409
    assert admin.post("/admin/users", {"username": "weak", "role": "viewer",
                                       "password": "short"}).json["code"] == "weak_password"
    temp = LoginClient(gateway.url)
    assert temp.login("temp", "temp-password-1").status == 200
    assert admin.post(f"/admin/users/{made.json['user']['id']}", {"disabled": True}).status == 200
    assert temp.get("/sessions").status == 401
    assert LoginClient(gateway.url).login("temp", "temp-password-1").status == 401
    last = admin.post(f"/admin/users/{admin.user['id']}", {"role": "viewer"})
    assert last.status == 409 and last.json["code"] == "last_admin"


def test_fifty_wrong_passwords_lock_the_account_until_the_cool_down(gateway: GatewayProcess) -> None:
    anon = Client(gateway.url)
    statuses = [anon.post("/auth/login", {"username": "bea", "password": f"wrong-{i}"}).status for i in range(50)]
    assert statuses[:10] == [401] * 10 and set(statuses[10:]) == {429}
    locked = anon.post("/auth/login", {"username": "bea", "password": PASSWORDS["bea"]})
    assert locked.status == 429 and locked.json["code"] == "login_locked"
    assert 1 <= int(locked.headers["retry-after"]) <= COOL_DOWN_S + 1
    time.sleep(COOL_DOWN_S + 0.5)
    assert anon.post("/auth/login", {"username": "bea", "password": PASSWORDS["bea"]}).status == 200


def test_chat_is_rate_limited_per_user(gateway: GatewayProcess) -> None:
    vic, ed = login(gateway, "vic"), login(gateway, "ed")
    assert [vic.post("/auth/rag-token", {}).status for _ in range(3)] == [200] * 3
    limited = vic.post("/auth/rag-token", {})
    assert limited.status == 429 and limited.json["code"] == "rate_limited"
    assert 1 <= int(limited.headers["retry-after"]) <= 60
    assert ed.post("/auth/rag-token", {}).status == 200  # per user, not global


def test_login_and_failed_login_are_audited_and_logs_hold_no_secret(gateway: GatewayProcess) -> None:
    admin = login(gateway, "ann")
    entries = admin.get("/admin/audit?limit=500").json["entries"]
    actions = {e["action"] for e in entries}
    assert {"login", "login_failed", "user_created", "token_created", "token_revoked", "share"} <= actions
    page = admin.get("/admin/audit?limit=2").json
    assert len(page["entries"]) == 2 and page["next_before"] == page["entries"][-1]["seq"]
    older = admin.get(f"/admin/audit?limit=2&before={page['next_before']}").json["entries"]
    assert older[0]["seq"] < page["entries"][-1]["seq"]
    log = gateway.log()
    for secret in (*PASSWORDS.values(), "temp-password-1", admin.csrf, admin.cookie.split("=", 1)[1]):
        assert secret not in log
    assert "dpt_" not in log and "wrong-7" not in log and "argon2" not in log


def _verify(data: Path, db: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "backend", "audit", "verify"], capture_output=True, text=True,
                          cwd=REPO_ROOT, env=base_env(data, DB_PATH=str(db)), timeout=60, check=False)


def test_audit_verify_detects_one_tampered_row(gateway: GatewayProcess, tmp_path: Path) -> None:
    live = Path(gateway.env["DOCENT_DATA_DIR"]) / "docent.db"
    copy = tmp_path / "copy.db"
    src, dst = sqlite3.connect(live), sqlite3.connect(copy)
    src.backup(dst)
    src.close()
    ok = _verify(tmp_path, copy)
    assert ok.returncode == 0 and "intact" in ok.stdout
    refused = None
    try:
        dst.execute("UPDATE audit_log SET actor = 'mallory' WHERE seq = 3")
    except sqlite3.DatabaseError as exc:
        refused = str(exc)
    assert refused and "append-only" in refused
    dst.execute("DROP TRIGGER audit_log_no_update")  # what someone editing the file could do
    dst.execute("UPDATE audit_log SET actor = 'mallory' WHERE seq = 3")
    dst.commit()
    dst.close()
    bad = _verify(tmp_path, copy)
    assert bad.returncode == 1 and "row 3" in bad.stdout


def test_per_address_lockout(tmp_path: Path) -> None:
    data = tmp_path / "data"
    create_user(data, "amy", "admin", "amy-password-1")
    gw = GatewayProcess(data, DOCENT_LOCKOUT_ADDRESS_ATTEMPTS="5", DOCENT_LOCKOUT_S="60")
    gw.start(wait_s=30)
    try:
        anon = Client(gw.url)
        spray = [anon.post("/auth/login", {"username": f"guess{i}", "password": "x" * 8}).status for i in range(6)]
        assert spray == [401] * 5 + [429]
        assert anon.post("/auth/login", {"username": "amy", "password": "amy-password-1"}).status == 429
    finally:
        gw.stop()
