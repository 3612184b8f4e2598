"""Accounts' pure parts: the route policy covers every route, grants, the audit chain, rate limits, passwords."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from backend.access import POLICY, authorize, rule_for
from backend.config import GatewayConfig, GatewayConfigError, load_gateway_config
from backend.passwords import PasswordPolicyError, hash_password, verify_password
from backend.principal import Principal
from backend.ratelimit import RateLimiter
from backend.routes import ALL_ROUTES, TABLE
from backend.store import Store
from common import grants
from common.errors import ApiError
from rag_system.api.access import Caller
from rag_system.api.routes import ROUTE_ACCESS, ROUTES

SECRET = b"0123456789abcdef0123456789abcdef"


def test_every_gateway_route_has_an_access_rule_and_nothing_else_does() -> None:
    routes = {(r.method, r.pattern) for r in ALL_ROUTES}
    assert routes == set(POLICY)
    assert {(r.method, r.pattern) for r in TABLE} <= routes
    assert rule_for("GET", "/a/route/added/later").checks != rule_for("GET", "/sessions").checks  # admin only


def test_every_rag_api_route_says_who_may_call_it() -> None:
    assert {(r.method, r.pattern) for r in ROUTES} == set(ROUTE_ACCESS)
    writes = {k for k, v in ROUTE_ACCESS.items() if v == "service"}
    assert ("POST", "/index") in writes and ("DELETE", "/indexes/{name}") in writes and ("GET", "/metrics") in writes


def test_a_grant_verifies_and_any_change_or_expiry_is_refused() -> None:
    token = grants.sign({"sub": "u1", "read": ["a"]}, SECRET, ttl_s=60, now=1000.0)
    claims = grants.verify(token, SECRET, now=1010.0)
    assert claims["sub"] == "u1" and claims["read"] == ["a"]
    with pytest.raises(ApiError) as expired:
        grants.verify(token, SECRET, now=1061.0)
    assert expired.value.code == "grant_expired"
    with pytest.raises(ApiError) as other_key:
        grants.verify(token, b"another secret of sixteen+ bytes", now=1010.0)
    assert other_key.value.code == "invalid_grant"
    head, payload, mac = token.split(".")
    widened = grants._b64(grants._unb64(payload).replace(b'["a"]', b'["a","b"]'))
    with pytest.raises(ApiError):
        grants.verify(f"{head}.{widened}.{mac}", SECRET, now=1010.0)
    for junk in ("dg1.", "dg1.x", "dg1.a.b.c", "dg1.!!.??"):
        with pytest.raises(ApiError):
            grants.verify(junk, SECRET)


def test_the_secret_file_is_made_once_and_private(tmp_path: Path) -> None:
    assert grants.load_secret("", tmp_path) is None
    made = grants.load_secret("", tmp_path, create=True)
    assert made and grants.load_secret("", tmp_path) == made
    assert (tmp_path / grants.SECRET_FILE).stat().st_mode & 0o777 == 0o600
    with pytest.raises(ValueError):
        grants.load_secret("short", tmp_path)
    assert grants.service_token(made) != grants.service_token(SECRET)


def test_a_grant_caller_is_refused_other_indexes_and_sessions_before_any_work() -> None:
    caller = Caller(False, "bob", "viewer", frozenset({"mine"}), "s1")
    caller.require_indexes(["mine"])
    caller.require_session("s1")
    caller.require_session(None)
    with pytest.raises(ApiError) as err:
        caller.require_indexes(["mine", "theirs"])
    assert err.value.status == 403 and err.value.code == "index_forbidden"
    with pytest.raises(ApiError):
        caller.require_session("s2")
    with pytest.raises(ApiError):
        caller.require_service("POST /index")


def test_the_audit_chain_catches_a_changed_or_missing_row(tmp_path: Path) -> None:
    store = Store(tmp_path / "a.db")
    for i in range(5):
        store.audit(f"user{i}", "login", address="127.0.0.1", detail={"n": i})
    assert store.verify_chain().ok and store.verify_chain().rows == 5
    conn = sqlite3.connect(tmp_path / "a.db")
    with pytest.raises(sqlite3.DatabaseError):
        conn.execute("DELETE FROM audit_log WHERE seq = 2")
    conn.execute("DROP TRIGGER audit_log_no_delete")
    conn.execute("DELETE FROM audit_log WHERE seq = 2")
    conn.commit()
    report = store.verify_chain()
    assert not report.ok and report.first_bad_seq == 2 and "missing" in report.reason
    store.close()


def test_rate_limiter_window_and_retry_after() -> None:
    limiter = RateLimiter({"chat": 2})
    limiter.hit("chat", "u", now=0.0)
    limiter.hit("chat", "u", now=1.0)
    with pytest.raises(ApiError) as err:
        limiter.hit("chat", "u", now=2.0)
    assert err.value.status == 429 and err.value.headers["Retry-After"] == "58"
    limiter.hit("chat", "other", now=2.0)
    limiter.hit("chat", "u", now=60.5)


def test_passwords_are_argon2id_and_policy_is_enforced() -> None:
    hashed = hash_password("long enough")
    assert hashed.startswith("$argon2id$") and verify_password(hashed, "long enough")
    assert not verify_password(hashed, "long enougH") and not verify_password(None, "long enough")
    with pytest.raises(PasswordPolicyError):
        hash_password("short")


def test_a_public_bind_needs_a_token_or_accounts() -> None:
    config = GatewayConfig()
    with pytest.raises(GatewayConfigError):
        config.check_bind("0.0.0.0")
    config.check_bind("0.0.0.0", accounts=True)
    with pytest.raises(GatewayConfigError):
        load_gateway_config({"DOCENT_AUTH": "sometimes"}, dotenv_path=None)
    assert load_gateway_config({"DOCENT_AUTH": "accounts", "DOCENT_LOCKOUT_S": "5"}, dotenv_path=None).lockout_s == 5


def test_the_first_admin_adopts_what_was_made_before_accounts(tmp_path: Path) -> None:
    store = Store(tmp_path / "b.db")
    sid = store.create_session("before accounts")["id"]
    iid = store.create_index("old index")["id"]
    admin = store.create_user("root", "admin", hash_password("root password"))
    later = store.create_user("eve", "editor", hash_password("eve password"))
    assert store.owner_of("sessions", sid) == (True, admin["id"])
    assert store.owner_of("indexes", iid) == (True, admin["id"]) and store.share_access(iid, later["id"]) is None
    store.put_share(iid, "*", "read")
    assert store.share_access(iid, later["id"]) == "read"
    store.close()


def test_the_web_app_never_hands_the_service_token_out_with_accounts(tmp_path: Path) -> None:
    from frontend.server import load_config

    env = {"DOCENT_FRONTEND_API_TOKEN": "svc-token", "DOCENT_DATA_DIR": str(tmp_path)}
    config = load_config(env=env)
    assert config.public()["apiToken"] == "svc-token"  # single-user mode, as before
    grants.load_secret("", tmp_path, create=True)  # the first user was created
    assert "apiToken" not in config.public()
    assert "apiToken" not in load_config(env={**env, "DOCENT_AUTH": "accounts", "DOCENT_DATA_DIR": "/nonexistent"}).public()


def test_the_access_check_returns_the_resolved_document_and_leaves_the_params_alone(tmp_path: Path) -> None:
    """A document asked for by its content hash is served as the readable copy's id, which `authorize`
    returns; the caller's parameters are not rewritten, and a document of an unshared index is a 403."""
    store = Store(tmp_path / "b.db")
    admin = store.create_user("root", "admin", hash_password("root password"))
    eve = store.create_user("eve", "editor", hash_password("eve password"))
    iid = store.create_index("shared")["id"]
    sha = "ab" * 32
    doc = store.add_document(filename="a.pdf", stored_path="/x/a.pdf", sha256=sha, size=1, index_id=iid)
    pattern, asked = "/documents/{document_id}/file", {"document_id": f"{sha}-2"}
    who = Principal("user", user_id=eve["id"], username="eve", role="editor")
    with pytest.raises(ApiError) as refused:
        authorize(store, who, "GET", pattern, asked)
    assert refused.value.code == "document_forbidden"
    store.put_share(iid, eve["id"], "read")
    allowed = authorize(store, who, "GET", pattern, asked)
    assert allowed.params == {"document_id": doc["id"]} and allowed.rule is rule_for("GET", pattern)
    assert asked == {"document_id": f"{sha}-2"}
    assert authorize(store, Principal("user", user_id=admin["id"], role="admin"), "GET", pattern, asked).params \
        == {"document_id": doc["id"]}
    store.close()
