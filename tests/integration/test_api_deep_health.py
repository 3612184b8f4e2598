"""`GET /health?deep=1` runs a real embedding and a one-row search and times each part."""

from __future__ import annotations

from tests.integration.api_support import api_settings, build, running_api, write_docs


def test_deep_health_before_and_after_an_index_exists(tmp_path, embedder):  # type: ignore[no-untyped-def]
    settings = api_settings(tmp_path / "data", LLM_BACKEND="extractive")
    with running_api(settings, embedder) as api:
        status, _, plain = api.call("GET", "/health")
        assert status == 200 and "deep" not in plain

        status, _, body = api.call("GET", "/health?deep=1")
        assert status == 200 and body["status"] == "ok"
        deep = body["deep"]
        assert deep["embed"]["ok"] and deep["embed"]["dimension"] == 384 and deep["embed"]["ms"] > 0
        assert deep["search"] == {**deep["search"], "ok": True, "index": None, "rows": 0}
        assert deep["llm"]["ok"] and deep["llm"]["chosen"] == "extractive"

        docs = write_docs(api.uploads / "docs")
        job, _ = build(api, "probe", [str(docs)])
        assert job["state"] == "done"
        status, _, body = api.call("GET", "/health?deep=1")
        assert status == 200
        assert body["deep"]["search"]["index"] == "probe" and body["deep"]["search"]["rows"] == 1
        assert body["deep"]["search"]["ms"] > 0


def test_deep_health_fails_when_the_index_cannot_be_searched(tmp_path, embedder):  # type: ignore[no-untyped-def]
    """An index written by another embedder cannot be queried: the deep check says so (503)."""
    from rag_system.embedding.base import EmbedderIdentity
    from rag_system.indexing.store import ChunkTable

    settings = api_settings(tmp_path / "data", LLM_BACKEND="extractive")
    with running_api(settings, embedder) as api:
        ChunkTable.open_or_create(api.service.db, "aaa-other-model", EmbedderIdentity("some/other-model", 8))
        status, _, plain = api.call("GET", "/health")
        assert status == 200  # the shallow check cannot see it
        status, _, body = api.call("GET", "/health?deep=1")
        assert status == 503 and body["status"] == "unavailable"
        search = body["deep"]["search"]
        assert search["ok"] is False and "other-model" in search["error"]
        assert body["deep"]["embed"]["ok"] is True
