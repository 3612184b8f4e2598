"""The synced-folder watcher with real file-system events (watchdog/inotify) on a real folder.

A burst of changes is one sync (debounce); hidden files (editor swap files)
and unbound folders start none; the periodic rescan starts one without any
event (the fallback for network mounts and lost events).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from rag_system.indexing.sync_watch import FolderWatcher


class Calls:
    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []
        self.cond = threading.Condition()

    def __call__(self, index: str, reason: str) -> None:
        with self.cond:
            self.seen.append((index, reason))
            self.cond.notify_all()

    def wait_for(self, n: int, timeout_s: float = 20.0) -> list[tuple[str, str]]:
        with self.cond:
            self.cond.wait_for(lambda: len(self.seen) >= n, timeout_s)
            return list(self.seen)


@pytest.fixture()
def calls() -> Calls:
    return Calls()


@pytest.fixture()
def watcher(calls: Calls) -> Iterator[FolderWatcher]:
    w = FolderWatcher(calls, debounce_s=0.5, rescan_s=0)
    w.start()
    yield w
    w.stop()


def test_a_burst_of_changes_is_one_sync(tmp_path: Path, watcher: FolderWatcher, calls: Calls) -> None:
    assert watcher.events_supported
    watcher.bind("docs", tmp_path)
    for i in range(6):  # a folder copied in: several files, a few writes each, 0.05 s apart
        (tmp_path / f"f{i}.md").write_text(f"file {i}")
        time.sleep(0.05)
    (tmp_path / "f0.md").rename(tmp_path / "renamed.md")
    assert calls.wait_for(1) == [("docs", "watch")]
    time.sleep(1.5)  # three more debounce periods: nothing else was changed
    assert calls.seen == [("docs", "watch")]


def test_hidden_files_and_unbound_folders_start_nothing(tmp_path: Path, watcher: FolderWatcher,
                                                        calls: Calls) -> None:
    watcher.bind("docs", tmp_path)
    (tmp_path / ".notes.md.swp").write_text("an editor's swap file")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "index").write_text("a version-control folder")
    time.sleep(1.5)
    assert calls.seen == []
    watcher.unbind("docs", tmp_path)
    assert watcher.folders("docs") == []
    (tmp_path / "after.md").write_text("written after the folder was unbound")
    time.sleep(1.5)
    assert calls.seen == []


def test_the_rescan_syncs_without_events(tmp_path: Path, calls: Calls) -> None:
    w = FolderWatcher(calls, debounce_s=0.5, rescan_s=0.5)
    w.start()
    try:
        w.bind("docs", tmp_path)
        assert calls.wait_for(2) == [("docs", "rescan"), ("docs", "rescan")]
    finally:
        w.stop()
