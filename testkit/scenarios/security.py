"""Token and CORS checks over every route of both services, derived from the route tables.

With `DOCENT_API_TOKEN` set, every route except `/health` must answer 401 to a
request without a token, with a wrong one, or with the right token under the
wrong scheme, before doing anything; `/health` stays public. A preflight from
an origin outside `DOCENT_CORS_ORIGINS` is refused and no response carries
`Access-Control-Allow-Origin` for it.
"""

from __future__ import annotations

import http.client
from dataclasses import dataclass, field

from testkit.scenarios.badinput import fill_path, routes, valid_params
from testkit.stack import Stack

EVIL_ORIGIN = "https://evil.example"
ALLOWED_ORIGIN = "http://127.0.0.1:3000"  # in the default DOCENT_CORS_ORIGINS of both services


@dataclass
class SecurityResult:
    tried: int = 0
    problems: list[str] = field(default_factory=list)


def _request(port: int, method: str, path: str, headers: dict[str, str]) -> tuple[int, dict[str, str]]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        body = b"{}" if method in ("POST", "PUT", "PATCH") else None
        if body is not None:
            headers = {**headers, "Content-Type": "application/json"}
        conn.request(method, path, body=body, headers=headers)
        resp = conn.getresponse()
        resp.read()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}
    finally:
        conn.close()


def run_security(stack: Stack) -> SecurityResult:
    result = SecurityResult()
    ports = {"gateway": stack.gw_port, "rag": stack.rag_port}
    params = valid_params(stack.seed, scratch=True)
    bad_auth: tuple[dict[str, str], ...] = ({}, {"Authorization": "Bearer wrong-token"}, {"Authorization": f"Basic {stack.token}"},
                {"Authorization": f"Bearer {stack.token}x"}, {"Authorization": "Bearer "})
    for service, method, pattern in routes():
        path = fill_path(pattern, params)
        public = pattern == "/health"
        for headers in bad_auth:
            result.tried += 1
            status, _ = _request(ports[service], method, path, {**headers, "Origin": EVIL_ORIGIN})
            if public and status != 200 or not public and status != 401:
                result.problems.append(f"{service} {method} {pattern} with {headers or 'no token'}: {status}")
        result.tried += 1
        status, head = _request(ports[service], "OPTIONS", path, {"Origin": EVIL_ORIGIN,
                                                                   "Access-Control-Request-Method": method})
        if status != 403 or "access-control-allow-origin" in head:
            result.problems.append(f"{service} preflight {pattern} from {EVIL_ORIGIN}: {status} {head}")
        result.tried += 1
        status, head = _request(ports[service], "OPTIONS", path, {"Origin": ALLOWED_ORIGIN,
                                                                   "Access-Control-Request-Method": method})
        if status != 204 or head.get("access-control-allow-origin") != ALLOWED_ORIGIN:
            result.problems.append(f"{service} preflight {pattern} from {ALLOWED_ORIGIN}: {status}")
    for service, port in ports.items():
        result.tried += 1
        status, head = _request(port, "GET", "/models", {"Authorization": f"Bearer {stack.token}",
                                                         "Origin": EVIL_ORIGIN})
        if status != 200 or "access-control-allow-origin" in head:
            result.problems.append(f"{service}: a foreign origin got CORS headers on an authorised GET: {head}")
    return result
