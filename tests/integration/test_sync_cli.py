"""`python -m rag_system sync <folder> --index <name> [--watch]` as a person runs it, in a real process."""

from __future__ import annotations

import json
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from testkit import REPO_ROOT
from testkit.processes import base_env

pytestmark = pytest.mark.slow

SYNC_ENV = {"SYNC_SETTLE_S": "0.2", "SYNC_DEBOUNCE_S": "0.3", "SYNC_RESCAN_S": "0", "EMBEDDER": "minilm"}


def _sync(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rag_system", "sync", *args], cwd=REPO_ROOT, env=env,
                          capture_output=True, text=True, timeout=300)


def _next_line(lines: queue.Queue[str], timeout_s: float = 120.0) -> dict[str, Any]:
    try:
        return json.loads(lines.get(timeout=timeout_s))
    except queue.Empty:
        raise AssertionError("the watching CLI printed no sync line") from None


def test_sync_once_then_watch(tmp_path: Path) -> None:
    env = base_env(tmp_path / "data", **SYNC_ENV)
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "tides.md").write_text("# Tides\n\nThe harbour tide peaks in March at 6.4 metres.\n")
    (folder / "boats.txt").write_text("Boats leave the harbour only at high water.\n")
    time.sleep(0.3)  # older than SYNC_SETTLE_S: nothing is held back

    first = _sync(env, str(folder), "--index", "notes")
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("synced notes (cli): 2 added, 0 updated, 0 removed, 0 failed"), first.stdout
    again = _sync(env, str(folder), "--index", "notes", "--json")
    assert again.returncode == 0, again.stderr
    run = json.loads(again.stdout)
    assert run["files_changed"] == 0 and run["unchanged"] == 2 and run["folders"] == [str(folder.resolve())]

    bad = _sync(env, str(tmp_path / "missing"), "--index", "notes")
    assert bad.returncode == 2 and "not a folder" in bad.stderr, bad.stderr
    bucket = _sync(env, "s3://docent/notes", "--index", "notes")  # not read as the folder "s3:/docent/notes"
    assert bucket.returncode == 2 and "sync binds local folders" in bucket.stderr, bucket.stderr
    assert "index s3://docent/notes --index NAME" in bucket.stderr
    bad_name = _sync(env, str(folder), "--index", "no/slashes")
    assert bad_name.returncode == 2 and "error:" in bad_name.stderr, bad_name.stderr

    proc = subprocess.Popen([sys.executable, "-m", "rag_system", "sync", str(folder), "--index", "notes", "--watch",
                             "--json"], cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            # a test run in the background (`cmd &`) inherits SIGINT ignored, and Python then keeps
                            # ignoring it: the child gets the default, as under a terminal
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    lines: queue.Queue[str] = queue.Queue()
    reader = threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout], daemon=True)  # type: ignore[union-attr]
    reader.start()
    try:
        assert _next_line(lines)["files_changed"] == 0
        (folder / "gulls.md").write_text("# Gulls\n\nGulls follow the boats back into the harbour.\n")
        (folder / "boats.txt").unlink()
        changed = 0
        while changed < 2:  # one debounced sync, or two if the second change came after the first sync began
            run = _next_line(lines)
            assert run["trigger"] == "watch" and run["failed"] == [], run
            changed += run["files_changed"]
        assert changed == 2
        proc.send_signal(signal.SIGINT)
        assert proc.wait(60) == 0
        assert "watching" in proc.stderr.read()  # type: ignore[union-attr]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)


def test_sigterm_stops_a_watcher_that_ignores_ctrl_c(tmp_path: Path) -> None:
    """Started in the background (`nohup ... &`), a watcher inherits SIGINT ignored; SIGTERM still stops it."""
    env = base_env(tmp_path / "data", **SYNC_ENV)
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "tides.md").write_text("# Tides\n\nThe harbour tide peaks in March at 6.4 metres.\n")
    time.sleep(0.3)
    proc = subprocess.Popen([sys.executable, "-m", "rag_system", "sync", str(folder), "--index", "notes", "--watch",
                             "--json"], cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    try:
        assert json.loads(proc.stdout.readline())["files_changed"] == 1  # type: ignore[union-attr]
        proc.send_signal(signal.SIGINT)
        time.sleep(1.0)
        assert proc.poll() is None  # ignored, as the shell arranged
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0
        assert "stopped" in proc.stderr.read()  # type: ignore[union-attr]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
