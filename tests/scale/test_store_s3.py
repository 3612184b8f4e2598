"""Every operation of the engine on an `s3://` store, against a real S3 server on loopback."""

from __future__ import annotations

from datetime import timedelta

import pytest

from rag_system.indexing.builder import build_index
from rag_system.indexing.connection import _table_names
from rag_system.indexing.manifest import Manifest, manifest_table_name
from rag_system.indexing.store import ChunkTable, is_missing_file, open_store, table_exists, table_name
from rag_system.retrieval.engine import RetrievalEngine
from tests.integration.api_support import build, running_api, write_docs
from tests.scale.conftest import s3_settings


def test_build_update_search_delete_through_the_api(s3, s3_uri, tmp_path, embedder):
    settings = s3_settings(s3, s3_uri, tmp_path / "data", DOCENT_ROLE="writer")
    with running_api(settings, embedder) as api:
        docs = write_docs(api.uploads / "d")
        job, _ = build(api, "kb", [str(docs)])
        assert job["state"] == "done", job
        assert job["summary"]["files"]["added"] == 3
        status, _, found = api.call("POST", "/retrieve", {"query": "hydrangeas", "index": "kb", "retrieval_k": 3})
        assert status == 200 and found["results"][0]["document_name"] == "garden.md"

        # Incremental: one file changed, one removed; the full-text index follows.
        (docs / "garden.md").write_text("Quokkas are small marsupials that live on Rottnest Island.")
        removed = sorted(p for p in docs.iterdir() if p.name != "garden.md")[0]
        removed.unlink()
        job, _ = build(api, "kb", [str(docs)])
        files = job["summary"]["files"]
        assert (files["updated"], files["removed"], files["unchanged"]) == (1, 1, 1), files
        status, _, found = api.call("POST", "/retrieve", {"query": "quokkas Rottnest", "index": "kb",
                                                          "retrieval_mode": "fts_only", "retrieval_k": 3})
        assert status == 200 and found["results"][0]["document_name"] == "garden.md"
        status, _, found = api.call("POST", "/retrieve", {"query": "hydrangeas", "index": "kb",
                                                          "retrieval_mode": "fts_only", "retrieval_k": 3})
        assert status == 200 and all("hydrangea" not in r["text"].lower() for r in found["results"])

        # The manifest lives in the store, nothing beside it on local disk.
        db = open_store(settings)
        assert manifest_table_name("kb") in _table_names(db)
        assert len(Manifest.open_existing(db, "kb").records()) == 2  # type: ignore[union-attr]
        assert not (tmp_path / "data" / "lancedb").exists()

        status, _, body = api.call("DELETE", "/indexes/kb")
        assert status == 200 and body["deleted"] is True
        db = open_store(settings)
        assert not any(table_exists(db, n) for n in (table_name("kb"), manifest_table_name("kb")))
        status, _, body = api.call("GET", "/indexes")
        assert status == 200 and "kb" not in [i["name"] for i in body["indexes"]]
        # The same name can be built again after its deletion.
        job, _ = build(api, "kb", [str(docs)])
        assert job["state"] == "done" and job["summary"]["files"]["added"] == 2, job


@pytest.mark.filterwarnings("ignore:optimize\\(cleanup_older_than=0\\):UserWarning")
def test_replica_survives_files_removed_by_cleanup(s3, s3_uri, tmp_path, embedder):
    writer = s3_settings(s3, s3_uri, tmp_path / "w")
    # A replica that would not look for new versions for an hour on its own.
    reader = s3_settings(s3, s3_uri, tmp_path / "r", DOCENT_READ_CONSISTENCY_S="3600",
                         DOCENT_KEEP_VERSIONS_S="7200")
    docs = write_docs(tmp_path / "docs")
    build_index([docs], "kb", writer, embedder=embedder)
    engine = RetrievalEngine(reader, embedder)
    options = engine.options(mode="hybrid", k=3)
    assert engine.retrieve("kb", "hydrangeas", options).candidates[0].document_name == "garden.md"

    (docs / "owls.md").write_text("Barn owls hunt voles at night over open meadows.")
    build_index([docs], "kb", writer, embedder=embedder)
    # A cleanup that ignores the retention (as if the replica lagged longer than
    # DOCENT_KEEP_VERSIONS_S): the replica's version loses its files.
    table = ChunkTable.open(open_store(writer), "kb")
    for t in (table.table, table.windows.table):  # type: ignore[union-attr]
        t.optimize(cleanup_older_than=timedelta(0), delete_unverified=True)

    stale = engine.table("kb")
    with pytest.raises((OSError, RuntimeError, ValueError)) as caught:
        engine.first_stage.search(stale, "barn owls voles", options)
    assert is_missing_file(caught.value), caught.value
    found = engine.retrieve("kb", "barn owls voles", options)
    assert found.candidates[0].document_name == "owls.md"
