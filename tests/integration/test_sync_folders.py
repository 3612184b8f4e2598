"""Synced folders under load: files edited (in two writes), added, renamed and deleted while questions run.

After the sync settles the index holds exactly the folder (the same documents
and content hashes as a fresh build), no question failed, and no question saw
half a document: every answer's chunks of a file come from one version of it,
all of its parts or none.
"""

from __future__ import annotations

import random
import threading
import time
from pathlib import Path

import pytest

from rag_system.indexing.manifest import Manifest
from rag_system.indexing.store import open_store
from rag_system.indexing.sync import sync_index, unsettled
from tests.integration.api_support import api_settings, running_api

PARTS = 3
ROUNDS = 14
FILLER = ("The archive keeps its records in order, and each record names the shelf it came from. "
          "Readers ask for records by shelf and by year, and the clerk writes every request down.")


def _text(name: str, version: int) -> str:
    parts = [f"# {name}"] + [f"## Part {k}\n\n{name} version {version} part {k}. {FILLER}" for k in range(PARTS)]
    return "\n\n".join(parts) + "\n"


def _write(path: Path, version: int, halves: bool = False) -> None:
    text = _text(path.stem, version)
    if not halves:
        path.write_text(text)
        return
    with path.open("w") as handle:  # a slow writer: half now, the rest a moment later
        handle.write(text[: len(text) // 2])
        handle.flush()
        time.sleep(0.15)
        handle.write(text[len(text) // 2:])


def _wait_job(api, job_id: str, timeout: float = 300.0) -> dict:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status, _, job = api.call("GET", f"/index/jobs/{job_id}")
        assert status == 200
        if job["state"] in ("done", "failed", "cancelled"):
            return job
        time.sleep(0.2)
    raise AssertionError(f"job {job_id} did not finish")


def _settle(api, index: str) -> dict:  # type: ignore[no-untyped-def]
    """Sync until a sync finds nothing left to change and nothing still being written."""
    for _ in range(20):
        status, _, body = api.call("POST", f"/indexes/{index}/sync", {})
        assert status == 202, body
        job = _wait_job(api, body["job_id"])
        assert job["state"] == "done", job
        run = job["summary"]["sync"]
        if run["added"] + run["updated"] + run["removed"] == 0 and not run["held"]:
            return run
        time.sleep(0.5)
    raise AssertionError("the folder never settled")


def _records(settings, index: str) -> dict[str, str]:  # type: ignore[no-untyped-def]
    manifest = Manifest.open_existing(open_store(settings), index)
    assert manifest is not None
    return {Path(path).name: record.document_id for path, record in manifest.records().items()}


def test_synced_folder_under_load_matches_a_fresh_build(tmp_path: Path, embedder) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path / "shared"
    folder = root / "library"
    folder.mkdir(parents=True)
    versions = {f"doc{i}": 1 for i in range(5)}
    for name, version in versions.items():
        _write(folder / f"{name}.md", version)
    settings = api_settings(tmp_path / "data", DOCENT_INDEX_ROOTS=str(root), SYNC_SETTLE_S="0.4",
                            SYNC_DEBOUNCE_S="0.4", SYNC_RESCAN_S="3", EMBEDDER="minilm")
    with running_api(settings, embedder) as api:
        status, _, bound = api.call("POST", "/indexes/lib/sync/folders", {"folder": str(folder)})
        assert status == 201, bound
        assert _wait_job(api, bound["job_id"])["state"] == "done"
        status, _, state = api.call("GET", "/indexes/lib/sync")
        assert status == 200 and state["folders"] == [str(folder.resolve())] and state["last_sync"]["added"] == 5

        stop = threading.Event()
        problems: list[str] = []
        asked = [0]
        names = sorted(versions)

        def ask() -> None:
            rng = random.Random(threading.get_ident())
            while not stop.is_set():
                name = rng.choice(names + [f"new{i}" for i in range(ROUNDS)])
                body = {"query": f"{name} version part records", "index": "lib", "retrieval_k": 10,
                        "filters": {"document_name": f"{name}.md"}}
                try:
                    status, _, found = api.call("POST", "/retrieve", body)
                except Exception as exc:  # a dropped connection is a failed question too
                    problems.append(f"{name}: {type(exc).__name__}: {exc}")
                    continue
                asked[0] += 1
                if status != 200:
                    problems.append(f"{name}: HTTP {status} {found}")
                    continue
                results = found["results"]
                seen = {(r["document_id"], r["text"].split(" version ")[1].split(" ")[0]) for r in results}
                if len(seen) > 1 or len(results) not in (0, PARTS):
                    problems.append(f"{name}: {len(results)} chunks from versions {sorted(seen)}")

        askers = [threading.Thread(target=ask) for _ in range(2)]
        for thread in askers:
            thread.start()
        rng = random.Random(21)
        try:
            for step in range(ROUNDS):
                op = ["edit", "edit", "add", "rename", "delete"][step % 5]
                present = sorted(p.stem for p in folder.glob("*.md"))
                if op == "edit" and present:
                    name = rng.choice(present)
                    versions[name] = versions.get(name, 1) + 1
                    _write(folder / f"{name}.md", versions[name], halves=True)
                elif op == "add":
                    _write(folder / f"new{step}.md", 1)
                    versions[f"new{step}"] = 1
                elif op == "rename" and present:
                    name = rng.choice(present)
                    (folder / f"{name}.md").rename(folder / f"new{step}.md")
                elif op == "delete" and len(present) > 2:
                    (folder / f"{rng.choice(present)}.md").unlink()
                time.sleep(rng.uniform(0.3, 1.2))
            run = _settle(api, "lib")
        finally:
            stop.set()
            for thread in askers:
                thread.join(60)
        assert problems == [], problems[:5]
        assert asked[0] >= 20
        assert run["failed"] == []
        # The index is the folder: the same files with the same content as a fresh build of it.
        status, _, body = api.call("POST", "/index", {"index": "fresh", "paths": [str(folder)]})
        assert status == 202 and _wait_job(api, body["job_id"])["state"] == "done"
        synced, fresh = _records(settings, "lib"), _records(settings, "fresh")
        assert synced == fresh and set(synced) == {p.name for p in folder.glob("*.md")}
        status, _, state = api.call("GET", "/indexes/lib/sync")
        triggers = {run["trigger"] for run in state["history"]}  # a rescan may come after the last manual sync
        assert "manual" in triggers and triggers <= {"manual", "watch", "rescan", "bind"} and len(state["history"]) >= 2


def test_files_still_being_written_are_held(tmp_path: Path, settings, embedder) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path / "docs"
    folder.mkdir()
    _write(folder / "old.md", 1)
    growing = folder / "growing.md"
    growing.write_text(_text("growing", 1))
    done = threading.Event()

    def keep_writing() -> None:  # a download still arriving
        with growing.open("a") as handle:
            while not done.wait(0.1):
                handle.write("More text arrives. ")
                handle.flush()

    writer = threading.Thread(target=keep_writing)
    writer.start()
    try:
        assert unsettled([folder], 0.5) == frozenset({growing.resolve()})
        run = sync_index("held", [folder], settings.with_overrides(sync_settle_s=0.5), embedder=embedder)
    finally:
        done.set()
        writer.join()
    assert run.added == 1 and run.held == [str(growing.resolve())]
    assert run.changed == [{"path": str((folder / "old.md").resolve()), "change": "added"}]
    again = sync_index("held", [folder], settings.with_overrides(sync_settle_s=0.5), embedder=embedder)
    assert again.added == 1 and again.held == [] and again.changed == [
        {"path": str(growing.resolve()), "change": "added"}]


def test_bind_checks_the_folder(tmp_path: Path, embedder) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path / "shared"
    (root / "ok").mkdir(parents=True)
    (root / "file.txt").write_text("not a folder")
    settings = api_settings(tmp_path / "data", DOCENT_INDEX_ROOTS=str(root))
    with running_api(settings, embedder) as api:
        for folder, code in ((str(tmp_path), "path_not_allowed"), (str(root / "missing"), "path_not_found"),
                             (str(root / "file.txt"), "not_a_folder"), ("", "invalid_folder")):
            status, _, body = api.call("POST", "/indexes/x/sync/folders", {"folder": folder})
            assert 400 <= status < 500 and body["code"] == code, (folder, body)
        status, _, body = api.call("POST", "/indexes/x/sync", {})
        assert status == 409 and body["code"] == "no_synced_folders"
        status, _, body = api.call("GET", "/indexes/x/sync")  # neither built nor bound
        assert status == 404 and body["code"] == "index_not_found"
        status, _, body = api.call("DELETE", "/indexes/x/sync/folders", {"folder": str(root / "ok")})
        assert status == 404 and body["code"] == "folder_not_bound"


@pytest.mark.parametrize("unused", [0])
def test_unbind_stops_syncing(tmp_path: Path, embedder, unused: int) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path / "shared"
    folder = root / "docs"
    folder.mkdir(parents=True)
    _write(folder / "a.md", 1)
    settings = api_settings(tmp_path / "data", DOCENT_INDEX_ROOTS=str(root), SYNC_SETTLE_S="0.2")
    with running_api(settings, embedder) as api:
        status, _, bound = api.call("POST", "/indexes/u/sync/folders", {"folder": str(folder)})
        assert status == 201 and _wait_job(api, bound["job_id"])["state"] == "done"
        status, _, state = api.call("DELETE", "/indexes/u/sync/folders", {"folder": str(folder)})
        assert status == 200 and state["folders"] == []
        assert api.service.sync.watcher.folders("u") == []


def test_a_missing_folder_never_empties_the_index(tmp_path: Path, settings, embedder) -> None:  # type: ignore[no-untyped-def]
    from rag_system.indexing.sync_state import SyncStore

    folder = tmp_path / "share"
    folder.mkdir()
    _write(folder / "a.md", 1)
    fast = settings.with_overrides(sync_settle_s=0.0)
    assert sync_index("mounted", [folder], fast, embedder=embedder).added == 1
    folder.rename(tmp_path / "unmounted")  # a network share that is not mounted right now
    with pytest.raises(FileNotFoundError, match="is missing"):
        sync_index("mounted", [folder], fast, embedder=embedder)
    assert set(_records(settings, "mounted")) == {"a.md"}
    last = SyncStore(open_store(settings), "mounted").load().last
    assert last is not None and "not mounted" in (last.error or "")
