"""`python -m backend backup` while the services work, and `restore` into an empty data folder.

The backup is taken while an index build runs and 20 questions are answered at once; the data
folder is then lost (moved away) and restored from the backup. The restored services must hold
the same sessions and messages (every conversation finished before the backup, and every other
one as it was at some moment: a prefix of its final state), the same chunk counts for the index
that was not being built, and give the same answer to the same question; the index that was
being built must be a state its next build completes (every file unchanged or added, no row
twice), which is what "copied between commits" promises.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from testkit import REPO_ROOT
from testkit.client import Client
from testkit.processes import base_env
from testkit.stack import SEED_QUESTION, Stack, _ok, wait_job

QUESTIONS = 20
BUSY_FILES = 60


def _cli(stack: Stack, *args: str, data: Path | None = None, token: str | None = None) -> subprocess.CompletedProcess[str]:
    env = base_env(data or stack.data, RAG_API_URL=f"http://127.0.0.1:{stack.rag_port}",
                   DOCENT_API_TOKEN=stack.token if token is None else token)
    return subprocess.run([sys.executable, "-m", "backend", *args], env=env, cwd=REPO_ROOT, capture_output=True,
                          text=True, timeout=600)


def _busy_files(folder: Path) -> list[tuple[str, bytes]]:
    """Enough distinct Markdown files that their build is still running when the backup starts."""
    out = []
    for i in range(BUSY_FILES):
        body = "\n\n".join(f"## Station {i}-{j}\n\nWeather station {i}-{j} recorded {i * 7 + j} millimetres of rain "
                           f"on day {j} of the survey; its anemometer number {i * 100 + j} was serviced by team {j % 5}."
                           for j in range(12))
        out.append((f"station-{i:02d}.md", f"# Survey sheet {i}\n\n{body}\n".encode()))
    return out


def _ask(stack: Stack, index_id: str, n: int) -> str:
    gw = stack.gw
    sid = _ok(gw.post("/sessions", {"title": f"Question {n}"}), 201)["session_id"]
    _ok(gw.post(f"/sessions/{sid}/indexes/{index_id}"))
    _ok(gw.post(f"/sessions/{sid}/messages", {"message": SEED_QUESTION}))
    return sid


def _answer(stack: Stack, index_id: str) -> dict[str, Any]:
    """The answer to the seed question on a fresh session: its text and the pages it cites."""
    gw = stack.gw
    sid = _ok(gw.post("/sessions", {"title": "Check"}), 201)["session_id"]
    _ok(gw.post(f"/sessions/{sid}/indexes/{index_id}"))
    reply = _ok(gw.post(f"/sessions/{sid}/messages", {"message": SEED_QUESTION}))
    _ok(gw.delete(f"/sessions/{sid}"))
    return {"response": reply["response"], "answer_source": reply["answer_source"],
            "citations": sorted(json.dumps(c, sort_keys=True) for c in reply["citations"])}


def _chunks(stack: Stack) -> dict[str, int]:
    return {i["name"]: i["chunks"] for i in _ok(stack.api.get("/indexes"))["indexes"]}


def test_backup_during_a_build_and_questions_restores_the_same(tmp_path: Path) -> None:
    stack = Stack(tmp_path / "live").start()
    try:
        (tmp_path / "seed-files").mkdir()
        seed = stack.make_seed(tmp_path / "seed-files")
        seed_answer = _answer(stack, seed.index_id)
        assert seed_answer["citations"], seed_answer
        before = stack.snapshot()  # the conversations finished before the backup

        busy = _ok(stack.gw.post("/indexes", {"name": "Busy"}), 201)["index_id"]
        _ok(stack.gw.upload(f"/indexes/{busy}/upload", _busy_files(tmp_path)))
        job = _ok(stack.gw.post(f"/indexes/{busy}/build"), 202)["job_id"]
        deadline = time.monotonic() + 300
        while (state := _ok(stack.gw.get(f"/indexes/{busy}/jobs/{job}")))["progress"]["done"] < 3:
            assert state["state"] in ("queued", "running") and time.monotonic() < deadline, state
            time.sleep(0.1)

        with ThreadPoolExecutor(QUESTIONS) as pool:
            asked = [pool.submit(_ask, stack, seed.index_id, n) for n in range(QUESTIONS)]
            done = _cli(stack, "backup", str(tmp_path / "backup"), "--json")
            during = _ok(stack.gw.get(f"/indexes/{busy}/jobs/{job}"))
            sessions = [f.result() for f in asked]
        assert done.returncode == 0, done.stderr
        report = json.loads(done.stdout)
        assert during["state"] == "running", "the build ended before the backup did: make it longer"
        assert len(sessions) == QUESTIONS

        final = wait_job(stack.gw, busy, job)
        assert final["state"] == "done", final
        after = stack.snapshot()
        # The RAG API removed its staging folder; the live store holds only tables.
        assert not [p for p in stack.data.iterdir() if p.name.startswith(".lancedb.backup-")]
    finally:
        stack.stop()

    backup = tmp_path / "backup"
    assert (backup / "backup.json").is_file() and oct(backup.stat().st_mode & 0o777) == "0o700"
    lost = tmp_path / "lost-data"
    os.replace(stack.data, lost)  # the disk is gone; the same folder is restored
    restored = _cli(stack, "restore", str(backup), "--json")
    assert restored.returncode == 0, restored.stderr

    again = Stack(tmp_path / "restored", data_dir=stack.data).start()
    try:
        now = again.snapshot()
        # Conversations: those finished before the backup exactly; every other one as it was at some moment.
        for sid, messages in before["messages"].items():
            assert now["messages"][sid] == messages
        for sid, messages in now["messages"].items():
            assert messages == after["messages"][sid][:len(messages)], sid
        assert set(now["sessions"]) <= set(after["sessions"]) and set(before["sessions"]) <= set(now["sessions"])
        assert len(now["sessions"]) == report["sessions"]
        assert sum(len(m) for m in now["messages"].values()) == report["messages"]
        # Indexes and stored files: all of them (the build's files were uploaded before the backup).
        assert now["indexes"] == after["indexes"]
        assert now["files"] == after["files"]
        (seed_name,) = before["chunks"]
        assert now["chunks"][seed_name] == after["chunks"][seed_name]
        assert _answer(again, seed.index_id) == seed_answer

        # The index that was being built: fewer or as many chunks, and its next build completes it.
        busy_name = next(n for n in after["chunks"] if n not in before["chunks"])
        assert 0 <= now["chunks"].get(busy_name, 0) <= after["chunks"][busy_name]
        rebuilt = wait_job(again.gw, busy, _ok(again.gw.post(f"/indexes/{busy}/build"), 202)["job_id"])
        files = rebuilt["summary"]["files"]
        assert rebuilt["state"] == "done" and files["updated"] == files["removed"] == 0 and not files["failed"], files
        assert files["unchanged"] + files["added"] == BUSY_FILES, files
        assert files["unchanged"] > 0, "nothing of the running build was in the backup"
        assert rebuilt["summary"]["index_totals"] == {"documents": BUSY_FILES, "chunks": after["chunks"][busy_name]}
        assert _chunks(again)[busy_name] == after["chunks"][busy_name]
        seed_rebuild = wait_job(again.gw, seed.index_id,
                                _ok(again.gw.post(f"/indexes/{seed.index_id}/build"), 202)["job_id"])
        assert seed_rebuild["summary"]["files"]["added"] == seed_rebuild["summary"]["files"]["updated"] == 0
    finally:
        again.stop()


def test_backup_and_restore_refuse_what_they_cannot_do_and_change_nothing(tmp_path: Path) -> None:
    stack = Stack(tmp_path / "live").start()
    try:
        (tmp_path / "seed-files").mkdir()
        stack.make_seed(tmp_path / "seed-files")
        busy = tmp_path / "not-empty"
        busy.mkdir()
        (busy / "keep.txt").write_text("mine")
        refused = _cli(stack, "backup", str(busy))
        assert refused.returncode == 2 and "not empty" in refused.stderr
        assert [p.name for p in busy.iterdir()] == ["keep.txt"]
        # The RAG API gives its store to the service token only.
        assert Client(stack.rag.url).post("/backup", {}).status == 401
        anonymous = _cli(stack, "backup", str(tmp_path / "anon"), token="wrong-token")
        assert anonymous.returncode == 1 and "RAG API" in anonymous.stderr
        assert not (tmp_path / "anon" / "backup.json").exists()
        good = _cli(stack, "backup", str(tmp_path / "good"))
        assert good.returncode == 0, good.stderr
        # Restoring over a data folder in use is refused, and leaves it as it was.
        snapshot = stack.snapshot()
        over = _cli(stack, "restore", str(tmp_path / "good"))
        assert over.returncode == 2 and "not empty" in over.stderr
        assert stack.snapshot() == snapshot
    finally:
        stack.stop()
    incomplete = tmp_path / "incomplete"
    incomplete.mkdir()
    partial = _cli(stack, "restore", str(incomplete), data=tmp_path / "fresh")
    assert partial.returncode == 2 and "backup.json" in partial.stderr
    assert not (tmp_path / "fresh" / "docent.db").exists()
