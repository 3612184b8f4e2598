"""Accounts under hostile use: every route of both services with no login, forged cookies and tokens,
missing CSRF, forged and expired grants; broken bodies and query strings on every account route
(`ACCOUNT_TABLE`); a password storm and logins in parallel. The promise: each is refused with the
right 4xx, never a 5xx or a crash.

Runs its own gateway and RAG API with accounts on (users made with the real CLI), so eval.stress
and tests/reliability/test_auth_probes.py exercise exactly what an operator deploys.
"""

from __future__ import annotations

import http.client
import json
import re
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from common import grants
from testkit.accounts import LoginClient, create_user
from testkit.processes import GatewayProcess, RagApiProcess, free_port

USERS = {"root": ("admin", "root-password-1"), "eve": ("editor", "eve-password-22"),
         "val": ("viewer", "val-password-333")}
BROKEN_BODIES = (b"", b"{", b"[]", b"null", b'"text"', b"{\"username\": 7, \"password\": []}",
                 b'{"username": "' + b"a" * 5000 + b'", "password": "x"}', b"\xff\xfe", b"{}" * 1000,
                 b'{"indexes": "all"}', b'{"indexes": [1, 2]}', b'{"access": "owner", "user": "eve"}',
                 b'{"role": "god", "username": "x", "password": "long enough"}')
BROKEN_QUERIES = ("?", "?user=", "?user=" + "u" * 5000, "?limit=0", "?limit=abc&before=-1", "?before=%ff",
                  "?limit=99999999999999999999", "?user=%00&user=x")


@dataclass
class AuthProbeResult:
    tried: int = 0
    statuses: Counter[int] = field(default_factory=Counter)
    crashes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def five_xx(self) -> int:
        return sum(n for s, n in self.statuses.items() if s >= 500)


def _send(port: int, method: str, path: str, body: bytes | None, headers: dict[str, str]) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        sent = dict(headers)
        if body is not None:
            sent.setdefault("Content-Type", "application/json")
        conn.request(method, path, body=body, headers=sent)
        resp = conn.getresponse()
        resp.read()
        return resp.status
    finally:
        conn.close()


class _Run:
    def __init__(self, result: AuthProbeResult) -> None:
        self.result = result

    def probe(self, port: int, method: str, path: str, body: bytes | None, headers: dict[str, str],
              expect: tuple[int, ...], label: str) -> None:
        self.result.tried += 1
        try:
            status = _send(port, method, path, body, headers)
        except (OSError, http.client.HTTPException) as exc:
            self.result.crashes.append(f"{method} {path} [{label}]: {type(exc).__name__}: {exc}")
            return
        self.result.statuses[status] += 1
        if status >= 500 or (expect and status not in expect):
            self.result.problems.append(f"{method} {path} [{label}]: {status}, expected {expect}")


def _fill(pattern: str, ids: dict[str, str]) -> str:
    return re.sub(r"\{(\w+)\}", lambda m: ids.get(m.group(1), "x"), pattern)


def run_auth_probes(root: Path, storm: int = 60) -> AuthProbeResult:
    from backend.routes import ACCOUNT_TABLE, ALL_ROUTES
    from rag_system.api.routes import ROUTES

    data = root / "data"
    for name, (role, password) in USERS.items():
        create_user(data, name, role, password)
    gw_port, rag_port = free_port(), free_port()
    gw = GatewayProcess(data, port=gw_port, rag_url=f"http://127.0.0.1:{rag_port}", DOCENT_LOCKOUT_S="2",
                        DOCENT_LOCKOUT_ADDRESS_ATTEMPTS="100000")
    rag = RagApiProcess(data, rag_port, gateway_url=f"http://127.0.0.1:{gw_port}")
    result = AuthProbeResult()
    run = _Run(result)
    gw.start(wait_s=30)
    try:
        rag.start(wait_s=240)
        eve, val, admin = LoginClient(gw.url), LoginClient(gw.url), LoginClient(gw.url)
        eve.login("eve", USERS["eve"][1])
        val.login("val", USERS["val"][1])
        admin.login("root", USERS["root"][1])
        iid = eve.post("/indexes", {"name": "Eve's"}).json["index_id"]
        sid = eve.post("/sessions", {"title": "Eve's"}).json["session_id"]
        ids = {"session_id": sid, "index_id": iid, "name": iid, "document_id": "d" * 32, "page": "1",
               "job_id": "j" * 32, "token_id": "t" * 32, "user_id": eve.user["id"], "grantee": val.user["id"]}
        secret = grants.load_secret("", data)
        assert secret is not None
        expired = grants.sign({"sub": val.user["id"], "read": [iid]}, secret, ttl_s=-5)
        forged = grants.sign({"sub": val.user["id"], "read": [iid]}, b"not the secret, sixteen+ bytes", ttl_s=60)
        bad_auth = {"none": {}, "junk_cookie": {"Cookie": "docent_session=forged"},
                    "junk_token": {"Authorization": "Bearer dpt_forged"},
                    "junk_bearer": {"Authorization": "Bearer whatever"}}
        for route in ALL_ROUTES:
            path = _fill(route.pattern, ids)
            body = b"{}" if route.method == "POST" else None
            for label, headers in bad_auth.items():
                expect = () if route.public else (401,)
                run.probe(gw_port, route.method, path, body, headers, expect, f"gateway {label}")
            if route.method in ("POST", "DELETE") and not route.public:
                run.probe(gw_port, route.method, path, body, {"Cookie": val.cookie}, (403,), "no csrf")
        for route in ROUTES:
            path = _fill(route.pattern, ids)
            body = json.dumps({"query": "q", "index": iid}).encode() if route.method == "POST" else None
            for label, headers in {**bad_auth, "expired_grant": {"Authorization": f"Bearer {expired}"},
                                   "forged_grant": {"Authorization": f"Bearer {forged}"}}.items():
                run.probe(rag_port, route.method, path, body, headers, () if route.public else (401,), f"rag {label}")
        as_admin = {"Cookie": admin.cookie, "X-CSRF-Token": admin.csrf}
        # Every account route (ACCOUNT_TABLE, so a route added later is probed too), logout last since
        # it ends the admin's login; bodies and query strings reach the parsers: an admin passes every
        # role check, and the service token reaches the service-only route.
        service = {"Authorization": f"Bearer {grants.service_token(secret)}"}
        for route in sorted(ACCOUNT_TABLE, key=lambda r: r.pattern == "/auth/logout"):
            path = _fill(route.pattern, {**ids, "user_id": val.user["id"]})
            for who, headers in (("admin", as_admin), ("service", service)):
                for raw in BROKEN_BODIES:
                    run.probe(gw_port, route.method, path, raw, headers, (), f"{who} body {raw[:16]!r}")
                for query in BROKEN_QUERIES:
                    run.probe(gw_port, route.method, path + query, None, headers, (), f"{who} query {query[:16]!r}")
        for i in range(storm):  # a password storm against one account: 401 then 429, never 5xx
            run.probe(gw_port, "POST", "/auth/login",
                      json.dumps({"username": "val", "password": f"guess-{i}"}).encode(), {}, (401, 429), "storm")
        with ThreadPoolExecutor(8) as pool:  # logins in parallel (argon2 under contention)
            statuses = list(pool.map(lambda _: LoginClient(gw.url).login("eve", USERS["eve"][1]).status, range(16)))
        result.tried += len(statuses)
        result.statuses.update(statuses)
        result.problems += [f"parallel login: {s}" for s in statuses if s != 200]
        log = gw.log() + rag.log()
        for name, (_, password) in USERS.items():
            if password in log:
                result.problems.append(f"the password of {name} is in a log")
        if eve.csrf in log or admin.csrf in log or "dg1." in log:
            result.problems.append("a CSRF token or grant is in a log")
    finally:
        rag.stop()
        gw.stop()
    return result
