"""The RAG API's build jobs on a Ray cluster (`DOCENT_RAY_ADDRESS`, issue 46), over real HTTP.

A real in-process RAG API with `DOCENT_RAY_ADDRESS=local:2`: the first build job starts a local
cluster of two workers and keeps it, the job's event stream carries the distributed build's
`build_committed`, the index answers `/retrieve`, a cancel of a running distributed job leaves
nothing committed, a synced folder syncs on the cluster too, and the API's shutdown stops the cluster. An address Ray cannot use fails the
job with the reason while every other request is answered.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from testkit.client import read_events
from tests.integration.api_support import Api, api_settings, build, running_api, write_docs

ray = pytest.importorskip("ray", reason="ray is not installed (requirements.txt)")
pytest.importorskip("lance", reason="pylance is not installed (requirements.txt)")

_WORDS = ("harbour", "lantern", "granite", "orchard", "meridian", "falcon", "copper", "tundra", "violet", "canal",
          "ember", "quartz", "saffron", "glacier", "willow", "basalt", "cobalt", "dune", "fjord", "juniper")


def _long_docs(count: int, sentences: int) -> dict[str, str]:
    """`count` text files of many distinct sentences: enough embedding that a build runs for seconds."""
    docs = {}
    for n in range(count):
        lines = [f"Report {n} section {i}: the {_WORDS[(n + i) % 20]} survey near the {_WORDS[(3 * i) % 20]} "
                 f"station counted {i * 7 + n} {_WORDS[(i * i + n) % 20]} samples in week {i % 52}."
                 for i in range(sentences)]
        docs[f"report-{n}.txt"] = "\n\n".join(" ".join(lines[i:i + 4]) for i in range(0, len(lines), 4))
    return docs


def test_unusable_ray_address_fails_the_job_not_the_api(tmp_path: Path, embedder: Any,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    if ray.is_initialized():  # a cluster another test left connected would be used instead of the address
        pytest.skip("this process is already connected to a Ray cluster")
    try:
        from ray.util.client import worker as client_worker
    except ImportError:  # no grpcio (Ray Client): the connection fails at once
        pass
    else:  # Ray Client retries an unreachable server for 5 + 10 + 15 s by default; 1 + 6 + 11 s here
        monkeypatch.setattr(client_worker, "INITIAL_TIMEOUT_SEC", 1)
    settings = api_settings(tmp_path / "data", DOCENT_RAY_ADDRESS="ray://127.0.0.1:9")
    with running_api(settings, embedder) as api:
        docs = write_docs(api.uploads / "bad")
        job, events = build(api, "bad", [str(docs)])
        assert job["state"] == "failed" and events[-1][0] == "failed"
        assert "Ray cluster DOCENT_RAY_ADDRESS=ray://127.0.0.1:9" in job["error"]
        assert "nothing was built" in job["error"]
        status, _, health = api.call("GET", "/health")
        assert status == 200, health
        status, _, _ = api.call("POST", "/retrieve", {"query": "hydrangeas", "index": "bad", "retrieval_k": 3})
        assert status < 500
        assert not api.service.jobs.ray.connected  # the next build tries again


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[Api]:
    root = tmp_path_factory.mktemp("api-ray")
    settings = api_settings(root / "data", DOCENT_RAY_ADDRESS="local:2", DOCENT_SSE_HEARTBEAT_S="0.2")
    owned = not ray.is_initialized()
    with running_api(settings, embedder) as api:
        assert api.service.jobs.ray is not None and not api.service.jobs.ray.connected  # lazily, at the first build
        yield api
    assert not api.service.jobs.ray.connected
    assert ray.is_initialized() is not owned  # the API stopped the cluster it started (and only that)


def test_build_job_runs_on_the_cluster_and_the_index_answers(api: Api) -> None:
    docs = write_docs(api.uploads / "ray1")
    job, events = build(api, "ray1", [str(docs)])
    assert job["state"] == "done" and job["error"] is None, job["error"]
    kinds = [e for e, _ in events]
    assert kinds[0] == "build_preparing" and kinds[-1] == "done"
    committed = [d for e, d in events if e == "build_committed"]
    assert len(committed) == 1 and committed[0]["fragments"]["chunks"] >= 1
    assert committed[0]["tasks"] >= 1 and committed[0]["workers"] >= 1
    assert kinds.index("build_committed") < kinds.index("file_written") < kinds.index("build_done")
    assert kinds.count("file_written") == 3 and job["progress"] == {"done": 3, "total": 3}
    assert {f["state"] for f in job["files"]} == {"done"}
    summary = job["summary"]
    assert summary["files"]["added"] == 3 and summary["index_totals"]["documents"] == 3
    assert summary["timings_s"]["commit"] >= 0
    assert api.service.jobs.ray.connected  # kept for the next build

    status, _, found = api.call("POST", "/retrieve", {"query": "hydrangeas", "index": "ray1", "retrieval_k": 3})
    assert status == 200 and found["results"][0]["document_name"] == "garden.md"
    # Unchanged files on the kept connection: nothing to commit, every file reported unchanged.
    job, events = build(api, "ray1", [str(docs)])
    assert job["state"] == "done" and {f["state"] for f in job["files"]} == {"unchanged"}
    assert "build_committed" not in [e for e, _ in events]


def test_cancel_of_a_running_distributed_job_commits_nothing(api: Api) -> None:
    docs = write_docs(api.uploads / "ray2", _long_docs(4, 100))
    status, _, body = api.call("POST", "/index", {"index": "ray2", "paths": [str(docs)]})
    assert status == 202, body
    job_id = body["job_id"]
    conn, resp = api.open_stream(f"/index/jobs/{job_id}/events", method="GET")
    kinds = []
    try:
        for kind, data in read_events(resp):
            kinds.append(kind)
            if kind == "build_started":  # the tasks are out on the cluster: cancel them
                assert data["to_process"] == 4
                status, _, _ = api.call("DELETE", f"/index/jobs/{job_id}")
                assert status == 200
    finally:
        conn.close()
    status, _, job = api.call("GET", f"/index/jobs/{job_id}")
    assert job["state"] == "cancelled", job
    assert "nothing was committed" in job["error"]
    assert kinds[-1] == "failed" and "build_committed" not in kinds and "file_written" not in kinds
    assert dict(api.service.index_sizes()).get("ray2", 0) == 0
    # The cluster is still usable: the same build, run again, finishes.
    job, _ = build(api, "ray2", [str(docs)])
    assert job["state"] == "done" and job["summary"]["files"]["added"] == 4


def test_a_synced_folder_syncs_on_the_cluster(api: Api) -> None:
    folder = write_docs(api.uploads / "synced", {"otters.md": "# Otters\n\nSea otters hold hands while they sleep."})
    status, _, bound = api.call("POST", "/indexes/ray3/sync/folders", {"folder": str(folder)})
    assert status == 201, bound
    events = api.stream(f"/index/jobs/{bound['job_id']}/events", method="GET")
    status, _, job = api.call("GET", f"/index/jobs/{bound['job_id']}")
    assert job["kind"] == "sync" and job["state"] == "done", job
    assert job["summary"]["sync"]["added"] == 1
    assert [e for e, _ in events].count("build_committed") == 1
    status, _, found = api.call("POST", "/retrieve", {"query": "otters sleep", "index": "ray3", "retrieval_k": 3})
    assert status == 200 and found["results"][0]["document_name"] == "otters.md"
