"""Index jobs over real HTTP: a job followed through its event stream, allowed roots, deletion."""

from __future__ import annotations

import os

import pytest

from tests.integration.api_support import api_settings, build, running_api, write_docs


@pytest.fixture(scope="module")
def api(tmp_path_factory, embedder):  # type: ignore[no-untyped-def]
    root = tmp_path_factory.mktemp("api-index")
    extra = root / "shared-docs"
    outside = root / "outside"
    write_docs(outside, {"secret.txt": "The vault code is 4711. Nobody may index this file."})
    settings = api_settings(root / "data", DOCENT_INDEX_ROOTS=str(extra), DOCENT_SSE_HEARTBEAT_S="0.2")
    with running_api(settings, embedder) as api:
        api.extra_root = extra  # type: ignore[attr-defined]
        api.outside = outside  # type: ignore[attr-defined]
        yield api


def test_index_job_followed_through_its_event_stream(api):
    docs = write_docs(api.uploads / "job1")
    job, events = build(api, "jobs1", [str(docs)])
    kinds = [e for e, _ in events]
    assert kinds[0] == "build_preparing" and "build_started" in kinds and kinds[-1] == "done"
    assert kinds.index("build_started") < kinds.index("file_started")
    assert kinds.count("file_written") == 3 and "build_done" in kinds
    assert kinds.index("build_done") < kinds.index("done")
    assert all(d["type"] == e for e, d in events)
    assert events[-1][1]["summary"]["files"]["added"] == 3
    assert job["state"] == "done" and job["error"] is None
    assert job["progress"] == {"done": 3, "total": 3}
    assert {f["state"] for f in job["files"]} == {"done"} and all(f["chunks"] >= 1 for f in job["files"])
    assert all(f["pages"] >= 1 for f in job["files"])  # every file listed with its page count
    counts = {f["path"]: (f["pages"], f["chunks"]) for f in job["files"]}
    assert job["summary"]["index_totals"]["documents"] == 3 and job["finished_at"]

    status, _, found = api.call("POST", "/retrieve", {"query": "hydrangeas", "index": "jobs1", "retrieval_k": 3})
    assert status == 200 and found["results"][0]["document_name"] == "garden.md"
    # A rebuild of unchanged files reports them as unchanged, then the stream ends with `done`.
    job, events = build(api, "jobs1", [str(docs)])
    assert job["state"] == "done" and {f["state"] for f in job["files"]} == {"unchanged"}
    assert {f["path"]: (f["pages"], f["chunks"]) for f in job["files"]} == counts  # from the manifest
    # Replaying a finished job's events gives the same stream again.
    again = api.stream(f"/index/jobs/{job['job_id']}/events", method="GET")
    assert [e for e, _ in again] == [e for e, _ in events]


def test_failed_file_is_reported_in_the_job(api):
    folder = api.uploads / "job2"
    write_docs(folder, {"good.txt": "Pelicans live near the coast and eat fish.", "empty.txt": "   "})
    job, events = build(api, "jobs2", [str(folder)])
    assert job["state"] == "done"
    by_name = {os.path.basename(f["path"]): f for f in job["files"]}
    assert by_name["empty.txt"]["state"] == "failed" and "no text" in by_name["empty.txt"]["error"]
    assert by_name["good.txt"]["state"] == "done"
    assert "file_failed" in [e for e, _ in events]


def test_extra_root_is_allowed(api):
    docs = write_docs(api.extra_root / "more", {"note.md": "# Note\n\nOtters hold hands while sleeping."})
    job, _ = build(api, "extra", [str(docs / "note.md")])
    assert job["state"] == "done" and job["progress"] == {"done": 1, "total": 1}


def test_paths_outside_the_roots_are_403(api):
    uploads = api.uploads
    uploads.mkdir(parents=True, exist_ok=True)
    (uploads / "link-out").symlink_to(api.outside, target_is_directory=True)
    (uploads / "file-out.txt").symlink_to(api.outside / "secret.txt")
    mixed = uploads / "mixed"
    write_docs(mixed, {"fine.txt": "Nothing to see."})
    (mixed / "sneaky.txt").symlink_to(api.outside / "secret.txt")
    for path in ("/etc", "/etc/passwd", str(api.outside), str(uploads / ".." / ".." / "outside"),
                 f"{uploads}/../../outside/secret.txt", str(uploads / "link-out"),
                 str(uploads / "link-out" / "secret.txt"), str(uploads / "file-out.txt"), str(mixed),
                 "relative/path"):
        status, _, body = api.call("POST", "/index", {"index": "evil", "paths": [path]})
        assert status == 403, (path, body)
        assert body["code"] == "path_not_allowed"
    status, _, body = api.call("POST", "/index", {"index": "evil", "paths": [str(uploads / "missing.pdf")]})
    assert status == 404 and body["code"] == "path_not_found"


@pytest.mark.parametrize("body, code", [
    ({"paths": ["x"]}, "invalid_index_name"),
    ({"index": "bad name!", "paths": ["x"]}, "invalid_index_name"),
    ({"index": "ok", "paths": []}, "invalid_paths"),
    ({"index": "ok", "paths": "x"}, "invalid_paths"),
    ({"index": "ok", "paths": [1]}, "invalid_paths"),
])
def test_bad_index_requests_are_400(api, body, code):
    status, _, out = api.call("POST", "/index", body)
    assert status == 400 and out["code"] == code


def test_unknown_job_is_404(api):
    assert api.call("GET", "/index/jobs/0123")[0] == 404
    assert api.call("GET", "/index/jobs/0123/events")[0] == 404


def test_delete_index_drops_the_table_and_the_cached_handle(api):
    docs = write_docs(api.uploads / "gone", {"a.txt": "Walruses can sleep in the water."})
    job, _ = build(api, "gone", [str(docs)])
    assert job["state"] == "done"
    assert api.call("POST", "/retrieve", {"query": "walrus", "index": "gone"})[0] == 200
    status, _, body = api.call("GET", "/indexes")
    assert "gone" in {i["name"] for i in body["indexes"]}
    status, _, body = api.call("DELETE", "/indexes/gone")
    assert status == 200 and body["deleted"] is True
    status, _, body = api.call("DELETE", "/indexes/gone")
    assert status == 404 and body["code"] == "index_not_found"
    status, _, body = api.call("POST", "/retrieve", {"query": "walrus", "index": "gone"})
    assert status == 404
    status, _, body = api.call("GET", "/indexes")
    assert "gone" not in {i["name"] for i in body["indexes"]}


def test_a_queued_job_can_be_cancelled(api):
    first = write_docs(api.uploads / "c1")
    second = write_docs(api.uploads / "c2", {"b.txt": "Puffins nest in burrows on cliffs."})
    status, _, running = api.call("POST", "/index", {"index": "c1", "paths": [str(first)]})
    status, _, queued = api.call("POST", "/index", {"index": "c2", "paths": [str(second)]})
    assert status == 202
    status, _, record = api.call("DELETE", f"/index/jobs/{queued['job_id']}")
    assert status == 200 and record["job_id"] == queued["job_id"]
    events = api.stream(f"/index/jobs/{queued['job_id']}/events", method="GET")
    assert [e for e, _ in events] == ["failed"] and events[0][1]["state"] == "cancelled"
    assert api.call("GET", f"/index/jobs/{queued['job_id']}")[2]["state"] == "cancelled"
    events = api.stream(f"/index/jobs/{running['job_id']}/events", method="GET")
    assert events[-1][0] == "done"


def test_a_finished_job_invalidates_cached_answers_for_its_index(tmp_path, embedder):
    settings = api_settings(tmp_path / "data", SEMANTIC_CACHE="true")
    with running_api(settings, embedder) as api:
        docs = write_docs(api.uploads / "kb", {"tides.txt": "Spring tides occur twice a month, near new and full moon."})
        assert build(api, "tides", [str(docs)])[0]["state"] == "done"
        ask = {"query": "When do spring tides occur?", "index": "tides", "backend": "extractive", "session_id": "s"}
        first = api.call("POST", "/chat", ask)[2]
        second = api.call("POST", "/chat", ask)[2]
        assert first["cached"] is False and second["cached"] is True
        (docs / "tides.txt").write_text("Spring tides occur twice each lunar month, at new moon and at full moon.")
        assert build(api, "tides", [str(docs)])[0]["state"] == "done"
        third = api.call("POST", "/chat", ask)[2]
        assert third["cached"] is False and "lunar month" in third["answer"]
