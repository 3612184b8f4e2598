"""A generated corpus of malformed requests over every route of the gateway and the RAG API.

Routes come from the two route tables (`backend.routes.TABLE`,
`rag_system.api.routes.ROUTES`), so a route added later is probed without
anyone editing this file. For every route the corpus has hostile path
parameters (traversal, absolute paths, NUL, huge, unicode, SQL), and for
every route that takes a body: broken JSON, wrong top-level types, deep
nesting, oversized bodies, lying Content-Length, and per-field mutations
(wrong types, missing fields, negative and enormous k, unknown modes, filter
injection, traversal in paths and names). `run_corpus` sends them raw over
http.client and counts statuses; a 5xx or a dropped connection is a failure.
"""

from __future__ import annotations

import http.client
import json
import random
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from testkit.stack import Seed

SEED = 20261129

#: Path-parameter values no route may accept; each is percent-encoded when sent.
HOSTILE_SEGMENTS = (
    "../../../../etc/passwd", "..", "/etc/passwd", "..\\..\\windows\\win.ini", "a\x00b", "\x00",
    "x" * 5000, "\u202etxt.exe", "💥🔥", "\ud800".encode("utf-8", "surrogatepass").decode("latin-1"),
    "' OR '1'='1", "%2e%2e%2f", "-1", "99999999999999999999999", "CON", "uploads/../../docent.db",
)

#: Bodies that are not a JSON object at all.
BROKEN_BODIES: tuple[tuple[str, bytes], ...] = (
    ("truncated_json", b'{"message": "hi"'),
    ("not_json", b"hello world"),
    ("json_array", b"[1, 2, 3]"),
    ("json_null", b"null"),
    ("json_string", b'"just a string"'),
    ("json_number", b"42"),
    ("invalid_utf8", b'{"message": "\xff\xfe\xfd"}'),
    ("lone_surrogate", b'{"message": "\\ud800", "query": "\\udfff", "title": "\\ud800"}'),
    ("deep_nesting_array", b"[" * 100_000 + b"]" * 100_000),
    ("deep_nesting_object", b'{"a":' * 50_000 + b"1" + b"}" * 50_000),
    ("duplicate_keys", b'{"message": "a", "message": 5, "query": 1, "query": null}'),
    ("nan_infinity", b'{"retrieval_k": NaN, "retrievalK": Infinity, "k": -Infinity}'),
    ("huge_number", b'{"retrieval_k": 1' + b"0" * 5000 + b"}"),
    ("bom_prefixed", b'\xef\xbb\xbf{"message": "hi"}'),
    ("nul_in_json", b'{"message": "a\\u0000b", "query": "\\u0000"}'),
)

#: Bodies above that RFC 8259 allows a parser to accept: they must not 5xx, but a 2xx is fine.
ODD_BUT_VALID = frozenset({"duplicate_keys", "bom_prefixed", "nul_in_json"})

#: Field mutations: each replaces one field of the route's valid body.
FIELD_VALUES: tuple[Any, ...] = (None, 123, -1, 10**18, 1.5, True, "", " ", [], {}, ["x"], {"$gt": ""},
                                 "x" * 100_000, "\u0000", "../../etc/passwd")


def _valid_bodies(seed: Seed, data_dir: str) -> dict[tuple[str, str, str], dict[str, Any]]:
    """A valid body per route that takes one: the mutations start from these."""
    upload = f"{data_dir}/uploads/{seed.index_id}"
    return {
        ("gateway", "POST", "/sessions"): {"title": "t", "model": "m"},
        ("gateway", "POST", "/sessions/{session_id}/rename"): {"title": "t"},
        ("gateway", "POST", "/sessions/{session_id}/messages"): {"message": "zephyr turbine?", "retrieval_k": 5,
                                                                  "retrieval_mode": "hybrid", "filters": {}},
        ("gateway", "POST", "/sessions/{session_id}/messages/save"): {"turn_id": "t1", "question": "q",
                                                                       "answer": "a", "status": "complete"},
        ("gateway", "POST", "/indexes"): {"name": "n", "description": "d", "metadata": {}},
        ("gateway", "POST", "/indexes/{index_id}/build"): {},
        ("gateway", "POST", "/messages/{message_id}/feedback"): {"rating": "up", "comment": "c"},
        ("rag", "POST", "/chat"): {"query": "zephyr?", "indexes": [seed.index_id], "retrieval_k": 5,
                                   "retrieval_mode": "hybrid", "backend": "extractive", "filters": {}},
        ("rag", "POST", "/chat/stream"): {"query": "zephyr?", "indexes": [seed.index_id], "retrieval_k": 5,
                                          "backend": "extractive"},
        ("rag", "POST", "/retrieve"): {"query": "zephyr?", "index": seed.index_id, "retrieval_k": 5,
                                       "retrieval_mode": "hybrid", "filters": {}},
        ("rag", "POST", "/index"): {"index": "probe_index", "paths": [upload]},
    }


#: Values that must be refused for a specific field of a specific kind of route.
TARGETED: tuple[tuple[str, Any], ...] = (
    ("retrieval_k", -1), ("retrieval_k", 0), ("retrieval_k", 10**12), ("retrieval_k", "5"), ("retrieval_k", True),
    ("reranker_top_k", -5), ("reranker_top_k", 10**9), ("context_window_size", -1), ("context_window_size", 10**6),
    ("retrieval_mode", "sql"), ("retrieval_mode", "HYBRID; DROP TABLE"), ("retrieval_mode", 7),
    ("search_type", "everything"), ("backend", "../../bin/sh"), ("backend", "gpt-17"),
    ("filters", "1=1"), ("filters", ["document_name"]), ("filters", {"document_name'; --": "x"}),
    ("filters", {"page": {"gte": -5}}), ("filters", {"page": {"between": [1, 2]}}),
    ("filters", {"chunk_index": {"lt": 2**40}}), ("filters", {"block_type": ["table", "'; DROP"]}),
    ("filters", {"file_type": "../pdf"}), ("filters", {"document_name": ["x"] * 2000}),
    ("filters", {"document_name": {"in": "not-a-list"}}), ("filters", {"__proto__": {"polluted": 1}}),
    ("index", "../../etc"), ("index", "/abs/path"), ("index", "a\x00b"), ("indexes", ["../x"]),
    ("indexes", "not-a-list"), ("indexes", [f"i{n}" for n in range(40)]),
    ("paths", ["/etc/passwd"]), ("paths", ["../../../../etc"]), ("paths", ["a\x00b"]), ("paths", []),
    ("paths", "/etc"), ("paths", [123]), ("paths", ["/proc/self/environ"]),
    ("turn_id", "../x"), ("turn_id", "a" * 500), ("turn_id", 5), ("session_id", "../../s"),
    ("status", "hacked"), ("citations", "not-a-list"), ("error", "str"), ("token_usage", [1]),
    ("metadata", "x"), ("metadata", [1]), ("max_tokens", 10**9), ("model", "m" * 5000),
)


@dataclass(frozen=True)
class Probe:
    service: str          # gateway | rag
    method: str
    pattern: str          # the route it targets (for coverage)
    path: str             # what is sent, already percent-encoded
    body: bytes | None
    label: str
    headers: tuple[tuple[str, str], ...] = ()
    must_refuse: bool = True  # a 2xx is a bug too (not only a 5xx)


@dataclass
class CorpusResult:
    tried: int = 0
    statuses: Counter[int] = field(default_factory=Counter)
    server_errors: list[str] = field(default_factory=list)
    crashes: list[str] = field(default_factory=list)
    accepted: list[str] = field(default_factory=list)  # must_refuse probes that got a 2xx

    @property
    def client_errors(self) -> int:
        return sum(n for s, n in self.statuses.items() if 400 <= s < 500)

    @property
    def five_xx(self) -> int:
        return sum(n for s, n in self.statuses.items() if s >= 500)


def routes() -> list[tuple[str, str, str]]:
    """(service, method, pattern) of every route of both services."""
    from backend.routes import TABLE
    from rag_system.api.routes import ROUTES

    return [("gateway", r.method, r.pattern) for r in TABLE] + [("rag", r.method, r.pattern) for r in ROUTES]


def _params(pattern: str) -> list[str]:
    import re

    return re.findall(r"\{(\w+)\}", pattern)


def fill_path(pattern: str, values: dict[str, str]) -> str:
    path = pattern
    for name in _params(pattern):
        path = path.replace("{" + name + "}", quote(values[name], safe=""))
    return path


def valid_params(seed: Seed, *, scratch: bool = False) -> dict[str, str]:
    """Ids that exist. With `scratch`, the session and index that requests may legitimately change."""
    session = seed.extra.get("scratch_session", seed.session_id) if scratch else seed.session_id
    index = seed.extra.get("scratch_index", seed.index_id) if scratch else seed.index_id
    return {"session_id": session, "index_id": index, "document_id": seed.document_id,
            "job_id": seed.job_id, "message_id": seed.message_id, "page": "1", "name": seed.index_id}


def build_corpus(seed: Seed, data_dir: str, rng_seed: int = SEED) -> list[Probe]:
    """Every probe, deterministic for a given seed and data."""
    rng = random.Random(rng_seed)
    good = valid_params(seed)
    bodies = _valid_bodies(seed, data_dir)
    probes: list[Probe] = []
    for service, method, pattern in routes():
        params = _params(pattern)
        for name in params:
            for value in HOSTILE_SEGMENTS:
                probes.append(Probe(service, method, pattern, fill_path(pattern, {**good, name: value}),
                                    _json(bodies.get((service, method, pattern))), f"path:{name}={value[:20]!r}"))
        probes.append(Probe(service, method, pattern + "/../../../etc/passwd",
                            _raw_traversal(fill_path(pattern, good)), None, "raw_dotdot"))
        probes.append(Probe(service, "PATCH", pattern, fill_path(pattern, good), None, "unsupported_method"))
        if method != "POST":
            continue
        path = fill_path(pattern, valid_params(seed, scratch=True))
        base = bodies.get((service, method, pattern))
        probes.extend(_body_probes(service, pattern, path, base, rng))
    return probes


def _body_probes(service: str, pattern: str, path: str, base: dict[str, Any] | None,
                 rng: random.Random) -> Iterator[Probe]:
    reads_json = base is not None or pattern.endswith("/upload")
    for label, raw in BROKEN_BODIES:
        yield Probe(service, "POST", pattern, path, raw, f"body:{label}",
                    must_refuse=reads_json and label not in ODD_BUT_VALID)
    yield Probe(service, "POST", pattern, path, b"{" + b" " * (9 * 1024 * 1024) + b"}", "body:huge_9mb",
                must_refuse=reads_json)
    for label, length in (("lying_length_huge", str(10**12)), ("negative_length", "-5"), ("text_length", "ten")):
        yield Probe(service, "POST", pattern, path, b"{}", f"body:{label}", headers=(("Content-Length", length),),
                    must_refuse=reads_json)
    if base is None:
        return
    for key in base:
        drop = {k: v for k, v in base.items() if k != key}
        yield Probe(service, "POST", pattern, path, _json(drop), f"missing:{key}", must_refuse=False)
        for value in rng.sample(FIELD_VALUES, 6):
            yield Probe(service, "POST", pattern, path, _json({**base, key: value}),
                        f"field:{key}={_short(value)}", must_refuse=False)
    for key, value in TARGETED:
        if key in base or _applies(service, pattern, key):
            yield Probe(service, "POST", pattern, path, _json({**base, key: value}), f"targeted:{key}={_short(value)}")


#: Fields a route reads although its valid body leaves them out (targeted values must be refused there too).
EXTRA_FIELDS: dict[tuple[str, str], frozenset[str]] = {
    ("gateway", "/sessions/{session_id}/messages"): frozenset({"reranker_top_k", "context_window_size",
                                                               "search_type", "backend", "model", "turn_id"}),
    ("rag", "/chat"): frozenset({"reranker_top_k", "context_window_size", "index", "max_tokens",
                                 "model", "session_id", "turn_id"}),
    ("rag", "/chat/stream"): frozenset({"reranker_top_k", "retrieval_mode", "filters", "search_type", "index",
                                        "max_tokens", "session_id", "turn_id", "context_window_size"}),
    ("rag", "/retrieve"): frozenset({"reranker_top_k", "indexes"}),
}


def _applies(service: str, pattern: str, key: str) -> bool:
    return key in EXTRA_FIELDS.get((service, pattern), frozenset())


def _json(body: dict[str, Any] | None) -> bytes | None:
    return None if body is None else json.dumps(body).encode()


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 24 else text[:21] + "..."


def _raw_traversal(path: str) -> str:
    return path.rstrip("/") + "/../../../../etc/passwd"


def send(host: str, port: int, probe: Probe, token: str, timeout: float = 60) -> int:
    """Send one probe on a fresh connection; the status, or raise on a dropped connection."""
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        conn.putrequest(probe.method, probe.path, skip_accept_encoding=True)
        headers = dict(probe.headers)
        if token:
            conn.putheader("Authorization", f"Bearer {token}")
        if probe.body is not None:
            conn.putheader("Content-Type", "application/json")
            headers.setdefault("Content-Length", str(len(probe.body)))
        for name, value in headers.items():
            conn.putheader(name, value)
        conn.endheaders()
        if probe.body is not None:
            sent = probe.body if headers["Content-Length"] == str(len(probe.body)) else b""
            try:
                conn.send(sent)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the server refused before reading the body: the status still comes back
        resp = conn.getresponse()
        resp.read()
        return resp.status
    finally:
        conn.close()


def run_corpus(probes: Iterable[Probe], ports: dict[str, int], token: str) -> CorpusResult:
    result = CorpusResult()
    for probe in probes:
        result.tried += 1
        where = f"{probe.service} {probe.method} {probe.path[:80]} [{probe.label}]"
        try:
            status = send("127.0.0.1", ports[probe.service], probe, token)
        except (OSError, http.client.HTTPException) as exc:
            result.crashes.append(f"{where}: {type(exc).__name__}: {exc}")
            continue
        result.statuses[status] += 1
        if status >= 500:
            result.server_errors.append(f"{where}: {status}")
        elif probe.must_refuse and status < 400:
            result.accepted.append(f"{where}: {status}")
    return result
