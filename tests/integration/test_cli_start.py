"""CLI commands that need no model load none: `index` with nothing to do, `retrieve` through a running RAG API.

Checked by what the process imports (`python -X importtime` lists every
module), not by the clock: PyTorch is what costs 8-10 s to start.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from rag_system.indexing.builder import build_index
from rag_system.indexing.events import BuildEvent
from rag_system.embedding.lazy import LazyEmbedder, build_embedder
from rag_system.cli.running_api import find_running_api
from testkit import REPO_ROOT
from tests.integration.api_support import api_settings, build, running_api, write_docs
from tests.integration.test_index_build import write_corpus


def _cli(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-X", "importtime", "-m", "rag_system", *args], cwd=REPO_ROOT,
                          env=env, capture_output=True, text=True, timeout=600)


def _imported(stderr: str) -> set[str]:
    return {line.split("|")[-1].strip() for line in stderr.splitlines() if line.startswith("import time:")}


def test_an_unchanged_build_loads_no_model_and_refreshes_nothing(tmp_path: Path, settings, embedder) -> None:  # type: ignore[no-untyped-def]
    write_corpus(tmp_path / "docs", 3)
    first = build_index([tmp_path / "docs"], "same", settings, embedder=embedder)
    assert first.added == 3
    lazy = build_embedder(settings)
    assert isinstance(lazy, LazyEmbedder)
    events: list[BuildEvent] = []
    again = build_index([tmp_path / "docs"], "same", settings, embedder=lazy, on_event=events.append)
    assert again.unchanged == 3 and again.chunks == 0
    assert not lazy.loaded, "nothing to embed, yet the model was loaded"
    assert "fts_refreshed" not in {e.type for e in events}  # every full-text index was current
    assert events[-1].data["progress"]["fraction"] == 1.0
    # the identity read from config.json is the loaded model's own
    assert (lazy.model().identity, lazy.max_tokens) == (lazy.identity, lazy.model().max_tokens)


def test_index_cli_with_nothing_to_do_never_imports_torch(tmp_path: Path) -> None:
    write_corpus(tmp_path / "docs", 2)
    env = {**os.environ, "DOCENT_DATA_DIR": str(tmp_path / "data"), "HF_HUB_OFFLINE": "1"}
    first = _cli(["index", str(tmp_path / "docs"), "--index", "cli", "--json"], env)
    assert first.returncode == 0, first.stderr[-2000:]
    assert "torch" in _imported(first.stderr)  # the check below can fail: a real build imports it
    second = _cli(["index", str(tmp_path / "docs"), "--index", "cli", "--json"], env)
    assert second.returncode == 0, second.stderr[-2000:]
    assert json.loads(second.stdout)["files"]["unchanged"] == 2
    assert "torch" not in _imported(second.stderr) and "transformers" not in _imported(second.stderr)


def test_retrieve_goes_through_the_running_api_of_the_same_store(tmp_path: Path, embedder) -> None:  # type: ignore[no-untyped-def]
    settings = api_settings(tmp_path / "data")
    docs = write_docs(tmp_path / "data" / "uploads" / "kb")
    with running_api(settings, embedder) as api:
        job, _ = build(api, "kb", [str(docs)])
        assert job["state"] == "done", job
        env = {**os.environ, "DOCENT_DATA_DIR": str(tmp_path / "data"), "HF_HUB_OFFLINE": "1",
               "RAG_API_URL": f"http://{api.host}:{api.port}"}
        done = _cli(["retrieve", "--index", "kb", "annual leave days", "--json", "--k", "3"], env)
        assert done.returncode == 0, done.stderr[-2000:]
        assert "torch" not in _imported(done.stderr)
        payload = json.loads(done.stdout)
        status, _, direct = api.call("POST", "/retrieve", {"query": "annual leave days", "index": "kb",
                                                           "retrieval_k": 3})
        assert status == 200
        assert [r["chunk_id"] for r in payload["results"]] == [r["chunk_id"] for r in direct["results"]]
        missing = _cli(["retrieve", "--index", "nosuch", "annual leave"], env)
        assert missing.returncode == 2 and "does not exist" in missing.stderr
        # a CLI over another data directory never uses this API
        other = api_settings(tmp_path / "elsewhere", RAG_API_PORT=str(api.port))
        assert find_running_api(other) is None
        assert find_running_api(api_settings(tmp_path / "data", RAG_API_PORT=str(api.port))) is not None


def test_index_goes_through_the_running_api_and_builds_here_what_it_may_not_read(  # type: ignore[no-untyped-def]
        tmp_path: Path, embedder) -> None:
    settings = api_settings(tmp_path / "data")
    inside = write_docs(tmp_path / "data" / "uploads" / "kb")  # the API may read its upload folder
    outside = write_docs(tmp_path / "elsewhere")  # but nothing else (DOCENT_INDEX_ROOTS is unset)
    with running_api(settings, embedder) as api:
        env = {**os.environ, "DOCENT_DATA_DIR": str(tmp_path / "data"), "HF_HUB_OFFLINE": "1",
               "RAG_API_URL": f"http://{api.host}:{api.port}"}
        first = _cli(["index", str(inside), "--index", "kb", "--json"], env)
        assert first.returncode == 0, first.stderr[-2000:]
        assert "built by the RAG API" in first.stderr
        assert json.loads(first.stdout)["files"]["added"] == len(list(inside.iterdir()))
        assert "lancedb" not in _imported(first.stderr) and "torch" not in _imported(first.stderr)
        # the API's own job did the work: its index answers a search
        status, _, found = api.call("POST", "/retrieve", {"query": "annual leave days", "index": "kb"})
        assert status == 200 and found["results"], found
        again = _cli(["index", str(inside), "--index", "kb"], env)
        assert again.returncode == 0, again.stderr[-2000:]
        assert f"0 added, 0 updated, {len(list(inside.iterdir()))} unchanged" in again.stdout
        assert "lancedb" not in _imported(again.stderr)
        # refused by the API (a bad name) is the CLI's usage error, with the API's reason
        bad = _cli(["index", str(inside), "--index", "no/slash"], env)
        assert bad.returncode == 2 and "error:" in bad.stderr
        # a folder the API may not read is built here, and the CLI says so
        local = _cli(["index", str(outside), "--index", "mine", "--json"], env)
        assert local.returncode == 0, local.stderr[-2000:]
        assert "building here" in local.stderr and "lancedb" in _imported(local.stderr)
        assert json.loads(local.stdout)["files"]["added"] == len(list(outside.iterdir()))
