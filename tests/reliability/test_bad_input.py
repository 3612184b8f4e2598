"""Hundreds of malformed requests over every route of both services: each one a 4xx, never a 5xx.

The corpus (`testkit.scenarios.badinput`) is generated from the two route tables, so a new
route is covered without editing it. Hypothesis adds random JSON bodies
(unicode edge cases, deep structures, wrong types) to every JSON route.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from testkit.scenarios.badinput import Probe, build_corpus, routes, run_corpus, send
from testkit.stack import Stack

pytestmark = pytest.mark.slow


def test_corpus_covers_every_route_and_nothing_breaks(stack: Stack, intact: None) -> None:
    probes = build_corpus(stack.seed, str(stack.data))
    assert len(probes) >= 300
    covered = {(p.service, p.pattern) for p in probes}
    assert {(s, pattern) for s, _m, pattern in routes()} <= covered
    result = run_corpus(probes, {"gateway": stack.gw_port, "rag": stack.rag_port}, stack.token)
    assert not result.crashes, "\n".join(result.crashes[:20])
    assert not result.server_errors, "\n".join(result.server_errors[:40])
    assert not result.accepted, "malformed requests were accepted:\n" + "\n".join(result.accepted[:40])
    assert result.client_errors >= 300, result.statuses


def test_traversal_in_upload_names_stays_in_the_upload_folder(stack: Stack, intact: None) -> None:
    iid = stack.seed.extra["scratch_index"]
    root = (stack.data / "uploads").resolve()
    for name in ("../../../escape.txt", "/etc/cron.d/escape.txt", "..\\..\\escape.txt", "a\x00b.txt",
                 "....//....//escape.txt", "\u202etxt.md", "%2e%2e%2fescape.txt", "~/.bashrc.txt"):
        reply = stack.gw.upload(f"/indexes/{iid}/upload", [(name, b"harmless text\n")])
        assert reply.status in (200, 400), (name, reply.status, reply.body)
        if reply.status == 200:
            stored = Path(reply.json["uploaded_files"][0]["stored_path"]).resolve()
            assert stored.is_relative_to(root / iid), (name, stored)
        else:
            assert reply.json["message"]
    assert not (stack.root / "escape.txt").exists() and not (stack.data / "escape.txt").exists()


def test_symlink_out_of_the_upload_root_is_refused(stack: Stack, intact: None, tmp_path: Path) -> None:
    """A local user plants a symlink inside the upload folder: the RAG API will not follow it out."""
    secret = tmp_path / "secret.txt"
    secret.write_text("the launch code is 0000\n")
    folder = stack.data / "uploads" / "planted"
    folder.mkdir()
    try:
        (folder / "link.txt").symlink_to(secret)
        for paths in ([str(folder / "link.txt")], [str(folder)], [str(stack.data / "uploads" / ".." / "..")]):
            reply = stack.api.post("/index", {"index": "planted", "paths": paths})
            assert reply.status == 403, (paths, reply.status, reply.body)
            assert reply.json["code"] == "path_not_allowed"
    finally:
        (folder / "link.txt").unlink()
        folder.rmdir()


def test_filter_injection_matches_nothing(stack: Stack, intact: None) -> None:
    """A quote in a filter value is data, not SQL: it must not widen the match."""
    seed = stack.seed
    for value in ("x' OR '1'='1", "x\") OR (1=1", "%", "*"):
        reply = stack.api.post("/retrieve", {"query": "zephyr turbine", "index": seed.index_id,
                                             "filters": {"document_name": value}})
        assert reply.status == 200, reply.body
        assert reply.json["results"] == [], value


_scalars = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
                     st.floats(allow_nan=False), st.text(max_size=50),
                     st.sampled_from(["\u0000", "\ud7ff\ue000", "\u202e", "../../etc", "\U0001d518\U0001d52b", ""]))
_json = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12),
                     inner, max_size=4), max_leaves=12)
_fields = st.sampled_from(["message", "query", "title", "name", "index", "indexes", "paths", "retrieval_k",
                           "retrieval_mode", "filters", "backend", "turn_id", "question", "answer", "status",
                           "metadata", "reranker_top_k", "session_id", "context_window_size"])
_bodies = st.dictionaries(_fields, _json, max_size=5) | _json


@pytest.mark.parametrize("service,pattern", [("gateway", "/sessions/{session_id}/messages"),
                                             ("gateway", "/sessions/{session_id}/messages/save"),
                                             ("gateway", "/indexes"), ("rag", "/chat"), ("rag", "/retrieve"),
                                             ("rag", "/index")])
@settings(max_examples=int(os.environ.get("DOCENT_HYPOTHESIS_EXAMPLES", "25")), derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(body=_bodies)
def test_random_json_bodies_never_5xx(stack: Stack, service: str, pattern: str, body: object) -> None:
    from testkit.scenarios.badinput import fill_path, valid_params

    path = fill_path(pattern, valid_params(stack.seed, scratch=True))
    raw = json.dumps(body).encode()
    port = stack.gw_port if service == "gateway" else stack.rag_port
    status = send("127.0.0.1", port, Probe(service, "POST", pattern, path, raw, "hypothesis"), stack.token)
    assert status < 500, (service, pattern, body, status)
