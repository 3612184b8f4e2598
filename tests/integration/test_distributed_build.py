"""Index builds fanned out on a real local Ray cluster (2 workers) over real documents (issue 46).

The localGPT corpora's acquisition PDFs, two of its Markdown docs and one RFC: the distributed build must
make what the single-process build makes (chunk ids, texts, vectors, manifest, top 10 for gold questions);
a worker killed mid-build must leave the committed index as it was, and a re-run must finish it; an
incremental re-run after one file changed must process that file alone.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rag_system.indexing.builder import BuildCancelled, build_index
from rag_system.indexing.events import BuildEvent
from rag_system.indexing.manifest import Manifest
from rag_system.indexing.store import ChunkTable, connect, open_store

ray = pytest.importorskip("ray", reason="ray is not installed (requirements.txt)")
pytest.importorskip("lance", reason="pylance is not installed (requirements.txt)")

from rag_system.indexing.distributed import (DistributedBuildError, build_index_distributed,  # noqa: E402
                                             ray_cluster)

CORPORA = Path(os.environ.get("DOCENT_EVAL_DATA", "/work/shared/eval-data")) / "localgpt" / "corpora"
MARKDOWN = ("verifier.md", "triage_system.md")
RFC = "RFC 9297 - HTTP Datagrams and the Capsule Protocol.txt"
QUESTIONS = ("What is the total purchase price for the StartupXYZ acquisition?",
             "Which regulatory approvals are required before closing?",
             "What does the triage system decide for each query?",
             "How is a capsule encoded in HTTP Datagrams?")
TASK_TITLE = "ray::docent_build_task"  # a worker's process title while it runs a build task


def _corpus(folder: Path) -> Path:
    if not (CORPORA / "acquisition").is_dir():
        pytest.skip(f"the localGPT corpora are not at {CORPORA} (set DOCENT_EVAL_DATA)")
    shutil.copytree(CORPORA / "acquisition", folder)
    for name in MARKDOWN:
        shutil.copy(CORPORA / "docs" / name, folder / name)
    shutil.copy(CORPORA / "rfc" / RFC, folder / RFC)
    return folder


@pytest.fixture(scope="module")
def cluster() -> Iterator[None]:
    with ray_cluster("local:2"):
        yield


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _corpus(tmp_path_factory.mktemp("corpus") / "docs")


def _settings(root: Path) -> Any:
    """fp32 embeddings: with bfloat16 (EMBEDDING_PRECISION=auto on a CPU that has it) a vector depends on
    the batch it was embedded in to ~1e-3, and a task's batches are not the single process's."""
    from rag_system.config import load_settings

    return load_settings(environ={"DOCENT_DATA_DIR": str(root), "EMBEDDING_PRECISION": "fp32"}, dotenv_path=None)


def _rows(settings: Any, index: str) -> dict[str, dict[str, dict[str, Any]]]:
    """Every table's rows by key: chunks by chunk id, windows and window vectors by (chunk id, window)."""
    table = ChunkTable.open(open_store(settings), index)
    out = {"chunks": {r["chunk_id"]: r for r in table.table.to_arrow().to_pylist()}}
    for name, side in (("windows", table.windows), ("vectors", table.vectors)):
        if side is not None:
            out[name] = {f"{r['chunk_id']}/{r['window_index']}": r for r in side.table.to_arrow().to_pylist()}
    return out


def _manifest(settings: Any, index: str) -> dict[str, dict[str, Any]]:
    manifest = Manifest.open_existing(open_store(settings), index)
    assert manifest is not None
    return {path: {k: v for k, v in vars(r).items() if k != "indexed_at"} for path, r in manifest.records().items()}


def _versions(settings: Any, index: str) -> dict[str, int]:
    db = connect(settings.resolved_lancedb_uri)
    names = db.list_tables().tables
    return {name: db.open_table(name).version for name in names if name.startswith(f"idx_{index}")}


def _assert_same_rows(a: dict[str, dict[str, dict[str, Any]]], b: dict[str, dict[str, dict[str, Any]]]) -> None:
    assert a.keys() == b.keys()
    for table in a:
        assert a[table].keys() == b[table].keys(), table
        for key, row in a[table].items():
            other = b[table][key]
            assert row.keys() == other.keys()
            for column, value in row.items():
                if column in ("vector", "vectors"):
                    assert np.allclose(np.array(value, dtype=np.float32), np.array(other[column], dtype=np.float32),
                                       atol=1e-5), (table, key, column)
                else:
                    assert value == other[column], (table, key, column)


def test_distributed_build_equals_the_single_process_build(tmp_path: Path, corpus: Path, cluster: None,
                                                           embedder: Any) -> None:
    from rag_system.retrieval.engine import RetrievalEngine

    single, spread = _settings(tmp_path / "single"), _settings(tmp_path / "spread")
    alone = build_index([corpus], "acq", single)
    events: list[BuildEvent] = []
    summary = build_index_distributed([corpus], "acq", spread, on_event=events.append)
    assert (summary.added, summary.failed, summary.chunks) == (alone.added, [], alone.chunks) and alone.added == 13
    assert summary.index_chunks == alone.index_chunks
    kinds = [e.type for e in events]
    assert kinds[0] == "build_preparing" and "build_started" in kinds and kinds[-1] == "build_done"
    assert kinds.count("file_written") == 13 and kinds.index("build_committed") < kinds.index("file_written")
    assert events[-1].data["progress"]["fraction"] == 1.0
    assert len({e.data.get("workers") for e in events if e.type == "build_committed"}) == 1

    _assert_same_rows(_rows(single, "acq"), _rows(spread, "acq"))
    assert _manifest(single, "acq") == _manifest(spread, "acq")
    first, second = RetrievalEngine(single, embedder), RetrievalEngine(spread, embedder)
    for question in QUESTIONS:
        ids = [[c.chunk_id for c in engine.retrieve("acq", question, engine.options(k=10)).candidates]
               for engine in (first, second)]
        assert len(ids[0]) == 10 and ids[0] == ids[1], question


def _titles() -> Iterator[tuple[int, str]]:
    """(pid, process title) of this test's own processes (Ray names a worker by the task it runs).

    Only descendants of this process (its local cluster's raylet and workers): another build running
    on the machine (a second test run, a benchmark, a user's `index --workers`) has workers with the
    same title, and killing one of those failed both that build and this test."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                pid = int(entry.name)
                title = (entry / "cmdline").read_bytes().split(b"\0")[0].decode(errors="replace")
                if _descends_from(pid, os.getpid()):
                    yield pid, title
            except OSError:  # gone meanwhile
                continue


def _descends_from(pid: int, ancestor: int) -> bool:
    while pid > 1:
        # /proc/<pid>/stat: "pid (comm) state ppid ..."; comm may hold spaces and parentheses
        pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        if pid == ancestor:
            return True
    return False


def _kill_first_task(stop: threading.Event, killed: list[int]) -> None:
    """SIGKILL the first worker process seen running a build task (a worker dying mid-build)."""
    while not stop.is_set():
        for pid, title in _titles():
            if title.startswith(TASK_TITLE):
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
                return
        time.sleep(0.02)


def test_killed_worker_commits_nothing_then_a_rerun_finishes_and_one_change_is_one_file(
        tmp_path: Path, corpus: Path, cluster: None) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    for pdf in sorted(corpus.glob("*.pdf"))[:5]:
        shutil.copy(pdf, folder / pdf.name)
    settings = _settings(tmp_path / "data")
    first = build_index_distributed([folder], "k", settings)
    assert first.added == 5
    before = (_rows(settings, "k"), _manifest(settings, "k"), _versions(settings, "k"))

    for path in corpus.iterdir():
        if not (folder / path.name).exists():
            shutil.copy(path, folder / path.name)
    stop, killed = threading.Event(), []  # type: ignore[var-annotated]
    killer = threading.Thread(target=_kill_first_task, args=(stop, killed), daemon=True)
    killer.start()
    try:
        with pytest.raises(DistributedBuildError, match="nothing was committed"):
            build_index_distributed([folder], "k", settings, max_retries=0)
    finally:
        stop.set()
        killer.join()
    assert killed, "no build task was seen running"
    after = (_rows(settings, "k"), _manifest(settings, "k"), _versions(settings, "k"))
    assert after[2] == before[2]  # not one commit on any table
    assert after[1] == before[1] and after[0].keys() == before[0].keys()
    assert {t: len(rows) for t, rows in after[0].items()} == {t: len(rows) for t, rows in before[0].items()}

    again = build_index_distributed([folder], "k", settings)
    assert (again.added, again.updated, again.unchanged, again.failed) == (8, 0, 5, [])
    reference = _settings(tmp_path / "reference")
    build_index([folder], "k", reference)
    _assert_same_rows(_rows(reference, "k"), _rows(settings, "k"))
    assert _manifest(reference, "k") == _manifest(settings, "k")

    changed = folder / MARKDOWN[0]
    changed.write_text(changed.read_text() + "\n\n## Zebra crossings\n\nThe verifier never audits zebra crossings.\n")
    events: list[BuildEvent] = []
    third = build_index_distributed([folder], "k", settings, on_event=events.append)
    assert (third.added, third.updated, third.unchanged, third.removed) == (0, 1, 12, 0)
    assert {e.path for e in events if e.type == "file_started"} == {str(changed)}
    assert sum(e.type == "file_unchanged" for e in events) == 12
    rows = _rows(settings, "k")["chunks"].values()
    names = [r["document_id"] for r in rows if r["document_name"] == changed.name]
    assert len(set(names)) == 1  # the old version's rows are gone
    assert any("zebra crossings" in r["text"] for r in rows)
    build_index([folder], "k", reference)  # the single-process build agrees on the incremental result too
    _assert_same_rows(_rows(reference, "k"), _rows(settings, "k"))
    assert json.dumps(_manifest(reference, "k"), sort_keys=True) == json.dumps(_manifest(settings, "k"), sort_keys=True)


def test_cancel_commits_nothing(tmp_path: Path, corpus: Path, cluster: None) -> None:
    settings = _settings(tmp_path / "data")
    cancel = threading.Event()

    def on_event(event: BuildEvent) -> None:
        if event.type == "file_started":  # the first task has finished: the build is under way
            cancel.set()

    with pytest.raises(BuildCancelled, match="nothing was committed"):
        build_index_distributed([corpus], "c", settings, on_event=on_event, cancel=cancel)
    assert {t: len(rows) for t, rows in _rows(settings, "c").items()} == {"chunks": 0, "windows": 0, "vectors": 0}
    assert _manifest(settings, "c") == {}


def test_cli_index_with_workers(tmp_path: Path, corpus: Path, cluster: None, monkeypatch: pytest.MonkeyPatch,
                                capsys: pytest.CaptureFixture[str]) -> None:
    from rag_system.cli.main import main

    folder = tmp_path / "docs"
    folder.mkdir()
    for pdf in sorted(corpus.glob("*.pdf"))[:3]:
        shutil.copy(pdf, folder / pdf.name)
    monkeypatch.setenv("DOCENT_DATA_DIR", str(tmp_path / "data"))
    assert main(["index", str(folder), "--index", "cli", "--workers", "local:0"]) == 2
    assert "local:N" in capsys.readouterr().err
    # The module's cluster is already connected: the CLI uses it as it is (a local:N of its own otherwise).
    assert main(["index", str(folder), "--index", "cli", "--workers", "local:2", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["files"]["added"] == 3 and summary["index_totals"]["documents"] == 3
    assert summary["timings_s"]["commit"] >= 0
