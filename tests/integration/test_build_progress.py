"""Build progress that moves: chunk counts while files embed, one overall fraction, failures counted apart."""

from __future__ import annotations

import io
import time
from pathlib import Path

import pytest

from rag_system.indexing import build_progress
from rag_system.indexing.build_progress import BuildProgress
from rag_system.indexing.builder import build_index
from rag_system.indexing.events import BuildEvent
from rag_system.cli.progress import ProgressReporter
from tests.integration.test_index_build import write_corpus


def test_embedding_reports_chunks_per_file_and_the_fraction_only_grows(
        tmp_path: Path, settings, embedder, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(build_progress, "EMBED_PROGRESS_EVERY_S", 0.0)  # every batch, so a small corpus shows steps
    write_corpus(tmp_path / "docs", 3, sentences=60)
    (tmp_path / "docs" / "empty.txt").write_text("  \n")
    events: list[BuildEvent] = []
    summary = build_index([tmp_path / "docs"], "p", settings, embedder=embedder, on_event=events.append)
    assert summary.added == 3 and len(summary.failed) == 1
    steps = [e for e in events if e.type == "file_embedding" and e.path.endswith("doc000.txt")]
    counts = [e.data["chunks_done"] for e in steps]
    assert len(counts) >= 2 and counts == sorted(counts) and counts[-1] == steps[-1].data["chunks"], counts
    fractions = [e.data["progress"]["fraction"] for e in events]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0, fractions
    assert any(0 < f < 1 for f in fractions)
    last = events[-1].data["progress"]
    assert (last["files_done"], last["files_total"], last["files_failed"]) == (4, 4, 1)
    assert last["chunks_done"] == last["chunks_total"] == summary.chunks


def test_eta_comes_from_the_measured_rate() -> None:
    seen: list[BuildEvent] = []
    # seventy seconds in, ten of them working: the first minute read files to detect their language,
    # which says nothing about how fast chunks embed (it made the trial's first ETA 15 min for 100 s)
    progress = BuildProgress(started=time.monotonic() - 70, work_started=time.monotonic() - 10)
    emit = progress.sink(seen.append)
    emit(BuildEvent("build_started", data={"to_process": 2, "bytes": 2000}))
    emit(BuildEvent("file_started", "/a.txt", {"size": 1000}))
    emit(BuildEvent("file_chunked", "/a.txt", {"chunks": 50}))
    assert seen[-1].data["progress"]["chunks_total"] == 100  # b.txt estimated from a.txt's chunks per byte
    emit(BuildEvent("file_embedding", "/a.txt", {"chunks_done": 25, "chunks": 50}))
    p = seen[-1].data["progress"]
    assert p["fraction"] == 0.25 and p["stage"] == "embedding"
    assert p["eta_s"] == pytest.approx(30, abs=0.5)  # a quarter in ten seconds: thirty more
    assert p["elapsed_s"] == pytest.approx(70, abs=0.5)  # the clock still shows the whole build


def test_the_terminal_bar_shows_real_elapsed_time_between_events() -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    out = Tty()
    reporter = ProgressReporter(out, tick_s=0.05)
    progress = BuildProgress()
    emit = progress.sink(reporter.handle)
    emit(BuildEvent("build_started", data={"to_process": 1, "bytes": 10}))
    emit(BuildEvent("file_started", "/x/a.txt", {"size": 10}))
    emit(BuildEvent("fts_refreshed", data={}))
    deadline = time.monotonic() + 10
    while "1s" not in out.getvalue().rsplit("\r", 1)[-1] and time.monotonic() < deadline:
        time.sleep(0.05)  # no event arrives: only the clock thread can change the line
    reporter.close()
    frames = out.getvalue().split("\r\x1b[2K")
    assert any("0s" in f and "refreshing the full-text index" in f for f in frames)
    assert any("1s" in f and "refreshing the full-text index" in f for f in frames), frames[-3:]


def test_a_build_reports_itself_while_it_prepares() -> None:
    """Before the plan (reading files to detect their language) the build says so, at 0%, with no ETA."""
    seen: list[BuildEvent] = []
    emit = BuildProgress().sink(seen.append)
    emit(BuildEvent("build_preparing", data={"files": 2, "step": "planning"}))
    emit(BuildEvent("build_preparing", data={"files": 2, "step": "detecting_language", "reading": "a.pdf"}))
    stages = [(e.data["progress"]["stage"], e.data["progress"]["fraction"], e.data["progress"]["eta_s"]) for e in seen]
    assert stages == [("planning", 0.0, None), ("detecting_language", 0.0, None)]
    emit(BuildEvent("build_started", data={"to_process": 2, "bytes": 2000}))
    assert seen[-1].data["progress"]["stage"] == "converting" and seen[-1].data["progress"]["fraction"] == 0.0
