"""Incremental builds against real LanceDB with the real packaged embedder."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from rag_system.indexing.builder import build_index
from rag_system.embedding.base import EmbedderIdentity
from rag_system.indexing.events import BuildEvent
from rag_system.indexing.manifest import Manifest
from rag_system.indexing.store import ChunkTable, EmbedderMismatchError, connect
from testkit import REPO_ROOT


def write_corpus(folder: Path, n: int, sentences: int = 12) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(n):
        body = "\n\n".join(
            f"Document {i} paragraph {p}. " + " ".join(
                f"Fact {p}.{s} about topic{i} is value {i * 100 + p * 10 + s}." for s in range(sentences))
            for p in range(3))
        path = folder / f"doc{i:03d}.txt"
        path.write_text(body)
        paths.append(path)
    return paths


def table_state(settings, index: str) -> dict[str, list[int]]:  # type: ignore[no-untyped-def]
    table = ChunkTable.open(connect(settings.resolved_lancedb_uri), index)
    rows = table.table.to_arrow().select(["document_id", "chunk_index"]).to_pylist()
    by_doc: dict[str, list[int]] = {}
    for row in rows:
        by_doc.setdefault(row["document_id"], []).append(row["chunk_index"])
    return {k: sorted(v) for k, v in by_doc.items()}


def test_incremental_build_add_skip_touch_remove(tmp_path: Path, settings, embedder) -> None:  # type: ignore[no-untyped-def]
    docs = write_corpus(tmp_path / "docs", 4)
    events: list[BuildEvent] = []
    first = build_index([tmp_path / "docs"], "t1", settings, embedder=embedder, on_event=events.append)
    assert (first.added, first.updated, first.unchanged, first.removed) == (4, 0, 0, 0)
    assert first.chunks > 0 and first.index_chunks == first.chunks and first.index_documents == 4
    assert {e.type for e in events} >= {"build_started", "file_started", "file_converted", "file_chunked",
                                          "file_embedded", "file_written", "fts_refreshed", "build_done"}

    again = build_index([tmp_path / "docs"], "t1", settings, embedder=embedder)
    assert (again.added, again.updated, again.unchanged, again.chunks) == (0, 0, 4, 0)

    docs[1].write_text(docs[1].read_text() + "\n\nA new closing paragraph about zebras.")
    docs[3].unlink()
    third = build_index([tmp_path / "docs"], "t1", settings, embedder=embedder)
    assert (third.added, third.updated, third.unchanged, third.removed) == (0, 1, 2, 1)
    state = table_state(settings, "t1")
    assert len(state) == 3
    assert all(v == list(range(len(v))) for v in state.values())

    table = ChunkTable.open(connect(settings.resolved_lancedb_uri), "t1")
    searched = table.windows.table if table.windows is not None else table.table  # what the full-text leg reads
    hits = searched.search("zebras", query_type="fts").limit(3).to_list()
    assert hits and "zebras" in hits[0]["text"] and hits[0]["document_name"] == "doc001.txt"


def test_vectors_are_normalized_and_identity_recorded(tmp_path: Path, settings, embedder) -> None:  # type: ignore[no-untyped-def]
    write_corpus(tmp_path / "docs", 1)
    build_index([tmp_path / "docs"], "t2", settings, embedder=embedder)
    db = connect(settings.resolved_lancedb_uri)
    table = ChunkTable.open(db, "t2", embedder.identity)
    assert table.recorded_identity() == (embedder.identity.model_id, 384)
    import numpy as np

    vectors = np.array(table.table.to_arrow()["vector"].to_pylist())
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    with pytest.raises(EmbedderMismatchError, match="rebuild"):
        ChunkTable.open(db, "t2", EmbedderIdentity("other/model", 768))


def test_explicit_file_added_to_existing_index_removes_nothing(tmp_path: Path, settings, embedder) -> None:  # type: ignore[no-untyped-def]
    write_corpus(tmp_path / "docs", 2)
    twin = write_corpus(tmp_path / "more", 1)[0]  # same bytes as docs/doc000.txt
    extra = tmp_path / "more" / "extra.txt"
    extra.write_text("An extra document about walruses.")
    build_index([tmp_path / "docs"], "t3", settings, embedder=embedder)
    summary = build_index([extra, twin], "t3", settings, embedder=embedder)
    assert (summary.added, summary.removed, summary.index_documents) == (1, 0, 3)
    assert summary.duplicates == [{"path": str(twin.resolve()),
                                   "same_content_as": str((tmp_path / "docs" / "doc000.txt").resolve())}]


def test_failed_files_are_reported_and_the_build_goes_on(tmp_path: Path, settings, embedder) -> None:  # type: ignore[no-untyped-def]
    write_corpus(tmp_path / "docs", 2)
    (tmp_path / "docs" / "empty.txt").write_bytes(b"")
    (tmp_path / "docs" / "bad.pdf").write_bytes(b"%PDF-1.4\n garbage that ends early")
    summary = build_index([tmp_path / "docs"], "t4", settings, embedder=embedder)
    failed = {Path(f["path"]).name: f["reason"] for f in summary.failed}
    assert set(failed) == {"empty.txt", "bad.pdf"}
    assert "empty" in failed["empty.txt"].lower()
    assert summary.added == 2
    # Failures are retried (and reported again) on the next run; good files are skipped.
    again = build_index([tmp_path / "docs"], "t4", settings, embedder=embedder)
    assert again.unchanged == 2 and len(again.failed) == 2


N_KILL_FILES = 90


def _cli(args: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "rag_system", *args], cwd=REPO_ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.slow
def test_a_file_written_to_while_it_is_read_is_held_not_indexed_half(tmp_path: Path, settings, embedder) -> None:  # type: ignore[no-untyped-def]
    """An editor's second write lands after the build hashed the file: hash and text would be of two versions."""
    docs = write_corpus(tmp_path / "docs", 2)
    first = build_index([tmp_path / "docs"], "held", settings, embedder=embedder)
    before = table_state(settings, "held")
    moving = docs[1]

    def write_meanwhile(event: BuildEvent) -> None:  # the build has stamped and hashed it, not yet read it
        if event.type == "file_started" and event.path == str(moving.resolve()):
            with moving.open("a") as handle:
                handle.write("\n\nA second half, written while the build was reading the first.")

    moving.write_text(moving.read_text() + "\n\nAn edit that the next build sees whole.")
    events: list[BuildEvent] = []
    second = build_index([tmp_path / "docs"], "held", settings, embedder=embedder,
                         on_event=lambda e: (events.append(e), write_meanwhile(e)))
    assert second.held == [str(moving.resolve())] and second.updated == 0 and not second.failed
    assert "file_held" in [e.type for e in events]
    assert table_state(settings, "held") == before  # the old version stays, whole
    third = build_index([tmp_path / "docs"], "held", settings, embedder=embedder)
    assert third.updated == 1 and third.held == [] and first.index_documents == third.index_documents == 2
    record = Manifest.open_or_create(connect(settings.resolved_lancedb_uri), "held").records()[str(moving.resolve())]
    assert record.size == moving.stat().st_size  # what was indexed is the file as it now is


def test_a_first_build_appends_and_rows_a_crash_left_are_replaced_not_doubled(tmp_path: Path, settings, embedder) -> None:  # type: ignore[no-untyped-def]
    """Writes append when no table holds the documents; a document whose window and vector rows a
    crash left behind (its chunk rows and manifest row not yet written) is replaced, not added twice."""
    paths = write_corpus(tmp_path / "docs", 3, sentences=30)
    windowed = settings.with_overrides(chunk_tokens=200, chunk_window_tokens=64)
    first = build_index([tmp_path / "docs"], "half", windowed, embedder=embedder)
    db = connect(settings.resolved_lancedb_uri)
    table = ChunkTable.open(db, "half", embedder.identity)
    assert table.windows is not None and table.vectors is not None

    def counts() -> list[int]:
        fresh = ChunkTable.open(connect(settings.resolved_lancedb_uri), "half", embedder.identity)  # latest versions
        return [t.count_rows() for t in (fresh.table, fresh.windows.table, fresh.vectors.table)]  # type: ignore[union-attr]

    whole = counts()
    assert first.added == 3 and whole[1] > whole[0]
    manifest = Manifest.open_existing(db, "half")
    assert manifest is not None
    doc = manifest.records()[str(paths[0].resolve())].document_id
    table.table.delete(f"document_id = '{doc}'")  # as if killed between the window and chunk commits
    manifest.remove([str(paths[0].resolve())])
    assert counts()[0] < whole[0] and counts()[1:] == whole[1:]
    second = build_index([tmp_path / "docs"], "half", windowed, embedder=embedder)
    assert (second.added, second.unchanged) == (1, 2)
    assert counts() == whole


def test_kill_minus_nine_mid_build_then_rerun_completes(tmp_path: Path) -> None:
    """A build killed with SIGKILL never leaves half a document; a re-run finishes it."""
    corpus = tmp_path / "docs"
    # Enough files for several embedding groups (EMBED_GROUP_CHUNKS), so the kill
    # lands while later groups are still unwritten.
    write_corpus(corpus, N_KILL_FILES, sentences=40)
    env = {**os.environ, "DOCENT_DATA_DIR": str(tmp_path / "data"), "HF_HUB_OFFLINE": "1"}
    proc = _cli(["index", str(corpus), "--index", "k", "--json"], env)
    written = 0
    assert proc.stderr is not None
    for line in proc.stderr:
        if f"/{N_KILL_FILES} files" in line:
            written += 1
        if written >= 3:
            proc.send_signal(signal.SIGKILL)
            break
    proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL, "the build finished before it could be killed"

    from rag_system.config import load_settings

    settings = load_settings(environ={"DOCENT_DATA_DIR": str(tmp_path / "data")}, dotenv_path=None)
    partial = table_state(settings, "k")
    assert 0 < len(partial) < N_KILL_FILES
    assert all(v == list(range(len(v))) for v in partial.values()), "half a document was written"

    rerun = _cli(["index", str(corpus), "--index", "k", "--json"], env)
    out, err = rerun.communicate(timeout=600)
    assert rerun.returncode == 0, err
    summary = json.loads(out)
    assert summary["files"]["added"] + summary["files"]["unchanged"] == N_KILL_FILES
    assert summary["files"]["failed"] == []
    final = table_state(settings, "k")
    assert len(final) == N_KILL_FILES and all(v == list(range(len(v))) for v in final.values())
    records = Manifest.open_existing(connect(settings.resolved_lancedb_uri), "k").records()  # type: ignore[union-attr]
    assert Counter(r.chunks for r in records.values()) == Counter(len(v) for v in final.values())


def test_window_vectors_are_stored_and_a_layout_change_rebuilds(tmp_path: Path, settings, embedder) -> None:  # type: ignore[no-untyped-def]
    import numpy as np

    from rag_system.indexing.store import WINDOWS_COLUMN, VectorLayoutMismatchError

    write_corpus(tmp_path / "docs", 2, sentences=30)
    windowed = settings.with_overrides(chunk_tokens=200, chunk_window_tokens=64)
    first = build_index([tmp_path / "docs"], "t9", windowed, embedder=embedder)
    db = connect(settings.resolved_lancedb_uri)
    table = ChunkTable.open(db, "t9", embedder.identity)
    assert table.window_tokens() == 64 and table.vector_column == WINDOWS_COLUMN
    data = table.table.to_arrow()
    windows = [np.array(w) for w in data[WINDOWS_COLUMN].to_pylist()]
    vectors = np.array(data["vector"].to_pylist())
    assert any(len(w) > 1 for w in windows) and all(len(w) >= 1 for w in windows)
    for w, v in zip(windows, vectors):
        assert np.allclose(np.linalg.norm(w, axis=1), 1.0, atol=1e-5)
        mean = w.mean(axis=0)
        assert np.allclose(v, mean / np.linalg.norm(mean), atol=1e-5)  # the chunk vector is their mean
    with pytest.raises(VectorLayoutMismatchError, match="CHUNK_WINDOW_TOKENS"):
        ChunkTable.open_or_create(db, "t9", embedder.identity, 0)

    single = settings.with_overrides(chunk_tokens=200, chunk_window_tokens=0)
    second = build_index([tmp_path / "docs"], "t9", single, embedder=embedder)
    assert (second.added, second.unchanged, second.index_chunks) == (2, 0, first.index_chunks)
    table = ChunkTable.open(connect(settings.resolved_lancedb_uri), "t9", embedder.identity)
    assert table.window_tokens() == 0 and table.vector_column == "vector"
    assert WINDOWS_COLUMN not in table.table.schema.names


def test_lookups_by_chunk_and_document_use_scalar_indexes_and_old_indexes_gain_them(
        tmp_path: Path, settings, embedder) -> None:  # type: ignore[no-untyped-def]
    from rag_system.indexing.store import sql_in

    write_corpus(tmp_path / "docs", 3)
    build_index([tmp_path / "docs"], "s1", settings, embedder=embedder)
    table = ChunkTable.open(connect(settings.resolved_lancedb_uri), "s1")
    some = table.table.to_arrow().slice(0, 2).to_pylist()

    def plan(t, where: str) -> str:  # type: ignore[no-untyped-def]
        return t.search().where(where).select(["chunk_id"]).explain_plan(True)

    assert "ScalarIndexQuery" in plan(table.table, sql_in("chunk_id", [r["chunk_id"] for r in some]))
    assert "ScalarIndexQuery" in plan(table.table, sql_in("document_id", [some[0]["document_id"]]))
    assert table.windows is not None
    assert "ScalarIndexQuery" in plan(table.windows.table, sql_in("document_id", [some[0]["document_id"]]))
    # An index built before scalar indexes existed gains them on its next build, with no file changed.
    for index in table.table.list_indices():
        if index.index_type in ("BTree", "Bitmap"):
            table.table.drop_index(index.name)
    assert "ScalarIndexQuery" not in plan(table.table, sql_in("chunk_id", [some[0]["chunk_id"]]))
    again = build_index([tmp_path / "docs"], "s1", settings, embedder=embedder)
    assert again.unchanged == 3
    table = ChunkTable.open(connect(settings.resolved_lancedb_uri), "s1")
    assert "ScalarIndexQuery" in plan(table.table, sql_in("chunk_id", [some[0]["chunk_id"]]))
