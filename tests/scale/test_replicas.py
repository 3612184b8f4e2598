"""One writer and two query replicas (separate processes) over one index in S3.

The writer runs in-process (it shares the session's embedder); the readers are
`python -m rag_system api` processes with read-only S3 credentials, so
everything they learn of the writer's work comes through the object store.
"""

from __future__ import annotations

import subprocess
import sys
import time
import uuid

import pytest

from rag_system.indexing.builder import build_index
from rag_system.indexing.manifest import Manifest
from rag_system.indexing.store import ChunkTable, open_store, table_name
from rag_system.indexing.windows import WINDOWS_SUFFIX, WindowTable
from testkit import REPO_ROOT
from testkit.replicas import base_env, replicas
from testkit.seaweed import READER, WRITER
from tests.integration.api_support import build, running_api, write_docs
from tests.scale.conftest import s3_settings

#: The replicas' read consistency interval in these tests.
CONSISTENCY_S = 1.0
SEEN_WITHIN_S = 30.0


@pytest.fixture(scope="module")
def cluster(s3, tmp_path_factory, embedder):  # type: ignore[no-untyped-def]
    root = tmp_path_factory.mktemp("cluster")
    uri = s3.uri(f"c-{uuid.uuid4().hex[:12]}")
    writer_settings = s3_settings(s3, uri, root / "writer", DOCENT_ROLE="writer")
    with running_api(writer_settings, embedder) as writer:
        envs = [{**base_env(root / f"reader{i}"), "LANCEDB_URI": uri, **s3.env(READER),
                 "DOCENT_ROLE": "reader", "DOCENT_WRITER_URL": f"http://127.0.0.1:{writer.port}",
                 "DOCENT_READ_CONSISTENCY_S": str(CONSISTENCY_S)} for i in range(2)]
        with replicas(envs, root / "logs") as readers:
            docs = write_docs(writer.uploads / "docs")
            job, _ = build(writer, "kb", [str(docs)])
            assert job["state"] == "done", job
            yield writer, readers, docs, uri, root


def _top(reader, query: str) -> str | None:  # type: ignore[no-untyped-def]
    status, body = reader.call("POST", "/retrieve", {"query": query, "index": "kb", "retrieval_k": 3})
    assert status == 200, body
    return body["results"][0]["document_name"] if body["results"] else None


def test_readers_answer_from_the_writers_index(cluster):
    writer, readers, *_ = cluster
    for reader in readers:
        assert reader.call("GET", "/health")[1]["role"] == "reader"
        assert _top(reader, "hydrangeas") == "garden.md"
        status, body = reader.call("POST", "/chat", {"query": "How often should hydrangeas be watered?",
                                                     "index": "kb", "backend": "extractive"})
        assert status == 200, body
        assert body["citations"] and body["citations"][0]["document_name"] == "garden.md"


def test_incremental_update_reaches_the_readers(cluster):
    writer, readers, docs, *_ = cluster
    (docs / "owls.md").write_text("Barn owls hunt voles at night over open meadows and farmland.")
    job, _ = build(writer, "kb", [str(docs)])
    assert job["state"] == "done" and job["summary"]["files"]["added"] == 1, job
    finished = time.monotonic()
    for reader in readers:
        while _top(reader, "barn owls hunting voles") != "owls.md":
            assert time.monotonic() - finished < SEEN_WITHIN_S, f"reader :{reader.port} never saw owls.md"
            time.sleep(CONSISTENCY_S / 2)


def test_readers_refuse_index_writes_and_name_the_writer(cluster):
    writer, readers, docs, *_ = cluster
    for reader in readers:
        status, body = reader.call("POST", "/index", {"index": "kb", "paths": [str(docs)]})
        assert status == 409 and body["code"] == "read_only_replica"
        assert f"http://127.0.0.1:{writer.port}" in body["message"]
        status, body = reader.call("DELETE", "/indexes/kb")
        assert status == 409, body
        assert _top(reader, "hydrangeas") == "garden.md"


def test_read_only_credentials_cannot_write(cluster, s3, embedder):
    writer, _, docs, uri, root = cluster
    before = ChunkTable.open(open_store(writer.service.settings), "kb").count()
    (docs / "bees.md").write_text("Honey bees dance to tell the hive where the clover grows.")
    reader_settings = s3_settings(s3, uri, root / "ro", READER)
    with pytest.raises((OSError, RuntimeError)) as caught:
        build_index([docs], "kb", reader_settings, embedder=embedder)
    assert "privileges" in str(caught.value) or "403" in str(caught.value) or "denied" in str(caught.value).lower()
    (docs / "bees.md").unlink()
    assert ChunkTable.open(open_store(writer.service.settings), "kb").count() == before


def test_concurrent_writers_lose_nothing(s3, s3_uri, tmp_path):
    settings = s3_settings(s3, s3_uri, tmp_path / "data")
    db = open_store(settings)
    Manifest.open_or_create(db, "conc")
    WindowTable.create(db, table_name("conc") + WINDOWS_SUFFIX)
    env = {**base_env(tmp_path / "data"), "LANCEDB_URI": s3_uri, **s3.env(WRITER)}
    signals = tmp_path / "signals"
    signals.mkdir()
    procs = {tag: subprocess.Popen([sys.executable, "-m", "tests.scale.write_proc", tag, "8", str(signals)],
                                   env=env, cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for tag in ("a", "b")}
    spans, steps = [], {}
    for tag, proc in procs.items():
        out, err = proc.communicate(timeout=180)
        assert proc.returncode == 0, err.decode()[-3000:]
        start, end, count = out.split()
        spans.append((float(start), float(end)))
        steps[tag] = int(count)
    assert max(s for s, _ in spans) < min(e for _, e in spans), f"the writers never overlapped: {spans}"
    assert min(steps.values()) >= 8, steps
    records = Manifest.open_existing(open_store(settings), "conc").records()  # type: ignore[union-attr]
    assert sorted(records) == sorted(f"/{t}/{i}.txt" for t, n in steps.items() for i in range(n))
    windows = open_store(settings).open_table(table_name("conc") + WINDOWS_SUFFIX)
    assert windows.count_rows() == sum(steps.values())
    assert sorted(windows.to_arrow()["document_id"].to_pylist()) == sorted(
        f"{t}-{i}" for t, n in steps.items() for i in range(n))
