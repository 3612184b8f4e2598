"""Storage faults: a full disk under the data directory, and a SQLite database held by other processes.

`disk_full` mounts a small tmpfs as `DOCENT_DATA_DIR` (root only; it says so
when mounting is refused), fills it, and checks that uploads, session writes
and an index build fail with a clear error while everything stored before
stays readable and unchanged, and that the services work again once space
is freed. `sqlite_locked` holds a long read transaction and then the write
lock from another connection, as a backup tool or a second process would:
requests wait for the lock, or after the busy timeout fail with 503, and the
database passes `PRAGMA integrity_check`.
"""

from __future__ import annotations

import errno
import sqlite3
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from testkit.client import Client
from testkit.processes import GatewayProcess
from testkit.scenarios.faults import FaultResult
from testkit.stack import SEED_MD, Stack, changed, wait_build, wait_job


class MountRefusedError(RuntimeError):
    """This machine does not let us mount a size-limited data directory."""


def _mount_tmpfs(path: Path, size: str) -> None:
    path.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise MountRefusedError(f"mount -t tmpfs failed: {done.stderr.strip() or done.returncode}")


def _fill(folder: Path) -> Path:
    """Write a filler file until the filesystem has no byte left."""
    filler = folder / "filler.bin"
    with open(filler, "wb", buffering=0) as out:
        for size in (1024 * 1024, 64 * 1024, 4096, 512, 1):
            block = b"\0" * size
            while True:
                try:
                    out.write(block)
                except OSError as exc:
                    if exc.errno != errno.ENOSPC:
                        raise
                    break
    return filler


def disk_full(root: Path, size: str = "24m") -> FaultResult:
    result = FaultResult("disk full on the data directory")
    data = root / "data"
    _mount_tmpfs(data, size)
    stack = Stack(root, data_dir=data)
    try:
        stack.start()
        gw = stack.gw
        iid = gw.post("/indexes", {"name": "Full disk"}).json["index_id"]
        gw.upload(f"/indexes/{iid}/upload", [("turbine.md", SEED_MD.encode())])
        wait_build(gw, iid)
        sid = gw.post("/sessions", {"title": "Before the disk filled"}).json["session_id"]
        gw.post(f"/sessions/{sid}/indexes/{iid}")
        asked = gw.post(f"/sessions/{sid}/messages", {"message": "How often is the zephyr turbine gearbox inspected?"})
        result.check("seed chat answered", asked.status == 200, asked.status)
        pending = gw.upload(f"/indexes/{iid}/upload", [("harbour.txt", b"The quillwort harbour tide is 6.4 m.\n")])
        result.check("second document uploaded", pending.status == 200, pending.status)
        before = stack.snapshot()
        filler = _fill(data)

        up = gw.upload(f"/indexes/{iid}/upload", [("big.txt", b"lorem ipsum dolor\n" * 40_000)])
        result.check("upload on a full disk: 507 insufficient_storage", up.status == 507
                     and up.json["code"] == "insufficient_storage", (up.status, up.body[:200]))
        leftovers = [p.name for p in (data / "uploads" / iid).iterdir() if p.name.startswith(".upload-")]
        result.check("no partial upload left behind", not leftovers, leftovers)
        statuses = [gw.post("/sessions", {"title": "x" * 200}).status for _ in range(60)]
        result.check("session writes: 201 until full, then 507, never 500", set(statuses) <= {201, 507}
                     and 507 in statuses, sorted(set(statuses)))
        chat = gw.post(f"/sessions/{sid}/messages", {"message": "And the zephyr turbine power?"})
        result.check("chat on a full disk: a clear 507, not a 500", chat.status in (200, 507), chat.status)
        started = gw.post(f"/indexes/{iid}/build")
        if started.status == 202:
            job = wait_job(gw, iid, started.json["job_id"])
            result.check("build on a full disk fails with a reason", job["state"] == "done" or (
                job["state"] == "failed" and job.get("error") and "internal error" not in job["error"]),
                (job["state"], job.get("error")))
        else:
            result.check("build refused cleanly", started.status in (503, 507), started.status)
        direct = stack.api.post("/index", {"index": iid, "paths": [pending.json["uploaded_files"][0]["stored_path"]]})
        job = _follow(stack, direct.json["job_id"]) if direct.status == 202 else {"state": str(direct.status)}
        result.check("RAG API build on a full disk fails with a reason", job["state"] == "failed" and job.get("error")
                     and "internal error" not in job["error"], (job["state"], job.get("error")))
        problems = changed(before, stack.snapshot())
        result.check("data stored before the disk filled is intact and readable", not problems, problems)

        filler.unlink()
        result.check("writes work again once space is freed", gw.post("/sessions", {"title": "after"}).status == 201)
        rebuilt = wait_build(gw, iid)
        result.check("build finishes once space is freed", rebuilt["state"] == "done", rebuilt.get("error"))
        found = stack.api.post("/retrieve", {"query": "quillwort harbour tide", "index": iid}).json["results"]
        result.check("document indexed after the retry", any(r["document_name"].endswith("harbour.txt")
                                                             for r in found), [r["document_name"] for r in found])
        result.check("SQLite integrity_check ok", _integrity(data / "docent.db") == "ok")
    finally:
        stack.stop()
        subprocess.run(["umount", "-l", str(data)], capture_output=True, check=False)
    return result


def _follow(stack: Stack, job_id: str, timeout_s: float = 300) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        job = stack.api.get(f"/index/jobs/{job_id}").json
        if job["state"] in ("done", "failed", "cancelled"):
            return job
        time.sleep(0.2)
    raise TimeoutError(f"RAG API job {job_id} did not finish in {timeout_s} s")


def _integrity(db: Path) -> str:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return str(conn.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        conn.close()


def sqlite_locked(root: Path) -> FaultResult:
    result = FaultResult("SQLite locked by a long reader and a writer")
    data = root / "data"
    root.mkdir(parents=True, exist_ok=True)
    gateway = GatewayProcess(data)
    gateway.start(wait_s=30)
    gw = gateway.client
    db = data / "docent.db"
    try:
        created = [gw.post("/sessions", {"title": f"before {n}"}).json["session_id"] for n in range(3)]
        reader = sqlite3.connect(db, isolation_level=None)
        reader.execute("BEGIN")
        seen = reader.execute("SELECT COUNT(*) FROM sessions").fetchone()[0]
        statuses = [gw.post("/sessions", {"title": f"during read {n}"}).status for n in range(20)]
        statuses += [gw.post(f"/sessions/{created[0]}/rename", {"title": "renamed"}).status]
        result.check("writes go on under a long read transaction", set(statuses) <= {200, 201}, statuses)
        result.check("the reader keeps its consistent view", reader.execute(
            "SELECT COUNT(*) FROM sessions").fetchone()[0] == seen)
        reader.execute("COMMIT")

        writer = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
        writer.execute("BEGIN IMMEDIATE")
        released = threading.Event()

        def release() -> None:
            time.sleep(2.0)
            writer.execute("COMMIT")
            released.set()

        threading.Thread(target=release, daemon=True).start()
        waited = gw.post("/sessions", {"title": "waited for the lock"})
        result.check("a write waits for another process's lock, then succeeds",
                     waited.status == 201 and released.is_set(), (waited.status, released.is_set()))
        writer.close()
        result.check("the gateway's busy timeout ends in a clean 503", *_busy_timeout(db))
        sessions = gw.get("/sessions").json["sessions"]
        titles = [s["title"] for s in sessions]
        result.check("every accepted write stored exactly once", titles.count("waited for the lock") == 1
                     and sum(t.startswith("during read") for t in titles) == 20, len(titles))
        result.check("SQLite integrity_check ok", _integrity(db) == "ok")
    finally:
        gateway.stop()
    return result


def _busy_timeout(db: Path) -> tuple[bool, str]:
    """An in-process gateway with a 0.3 s busy timeout against a lock held by another connection."""
    from backend.app import App
    from backend.config import load_gateway_config
    from backend.metrics import Metrics
    from backend.pages import PageRenderer
    from backend.rag_client import RagClient
    from backend.server import serve
    from backend.store import Store

    config = load_gateway_config({"DOCENT_DATA_DIR": str(db.parent)}, dotenv_path=None)
    app = App(config, Store(db, busy_timeout_s=0.3), RagClient("http://127.0.0.1:9"), Metrics(),
              PageRenderer(config.page_cache_dir))
    server = serve(app, "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    client = Client(f"http://127.0.0.1:{server.server_address[1]}")
    holder = sqlite3.connect(db, isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")
        refused = client.post("/sessions", {"title": "refused while locked"})
        readable = client.get("/sessions")
        holder.execute("ROLLBACK")
        after = client.post("/sessions", {"title": "after the lock"})
    finally:
        holder.close()
        server.shutdown()
        server.server_close()
        app.close()
    ok = (refused.status == 503 and refused.json["code"] == "store_busy"
          and refused.headers.get("retry-after") == "5" and readable.status == 200 and after.status == 201)
    return ok, f"locked: {refused.status} {refused.body[:120]!r}; read: {readable.status}; after: {after.status}"
