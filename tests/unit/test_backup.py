"""The parts of backups that need no running service: the store snapshot and its stream, restore's checks.

The whole path (a backup of running services, restored and queried) is
tests/integration/test_backup_restore.py.
"""

from __future__ import annotations

import io
import json
import sqlite3
from pathlib import Path

import lancedb
import pyarrow as pa
import pytest

from backend.backup import BackupError, read_meta, receive_store, restore
from backend.store import Store
from rag_system.indexing.connection import cleanup_held, compact
from rag_system.indexing.snapshot import (SnapshotError, SnapshotStream, StoreSnapshots, commit_rank,
                                          manifest_version)


def test_manifest_names_give_their_version_in_both_lance_namings() -> None:
    assert manifest_version("18446744073709551612.manifest") == 3  # u64::MAX - 3
    assert manifest_version("7.manifest") == 7
    assert manifest_version("latest_version_hint.json") is None
    assert manifest_version("3.txn") is None


def test_tables_are_read_in_the_reverse_of_a_builds_commit_order() -> None:
    names = ["idx_a__windows.lance", "idx_a.lance", "idx_a__manifest.lance", "idx_a__vectors.lance",
             "idx_a__sync.lance", "other__thing.lance"]
    ordered = sorted(names, key=commit_rank)
    assert ordered == ["idx_a__manifest.lance", "idx_a__sync.lance", "idx_a.lance", "idx_a__vectors.lance",
                       "idx_a__windows.lance", "other__thing.lance"]


def _stream(snapshots: StoreSnapshots) -> bytes:
    body = SnapshotStream(snapshots, snapshots.take())
    try:
        return b"".join(body)
    finally:
        body.close()


def test_a_snapshot_holds_the_version_it_read_and_not_what_came_after(tmp_path: Path) -> None:
    store = tmp_path / "lancedb"
    db = lancedb.connect(store)
    table = db.create_table("idx_a", pa.table({"n": list(range(10))}))
    snapshots = StoreSnapshots(str(store))
    snapshot = snapshots.take()
    table.add(pa.table({"n": [10, 11]}))  # committed after the snapshot was read
    compact(table, 0.001)  # and a cleanup that removes the old version's files from the live table
    body = SnapshotStream(snapshots, snapshot)
    data = b"".join(body)
    body.close()
    assert not snapshot.root.exists(), "the staging folder outlived the stream"

    copy = tmp_path / "copy"
    assert receive_store(io.BytesIO(data), copy) == {"idx_a": snapshot.tables["idx_a.lance"]}
    restored = lancedb.connect(copy).open_table("idx_a")
    assert restored.count_rows() == 10 and sorted(restored.to_arrow()["n"].to_pylist()) == list(range(10))
    assert table.count_rows() == 12


def test_one_backup_at_a_time_local_stores_only_and_a_cut_stream_is_an_error(tmp_path: Path) -> None:
    store = tmp_path / "lancedb"
    lancedb.connect(store).create_table("idx_a", pa.table({"n": [1]}))
    snapshots = StoreSnapshots(str(store))
    first = snapshots.take()
    with pytest.raises(SnapshotError, match="already running"):
        snapshots.take()
    snapshots.release(first)
    with pytest.raises(SnapshotError, match="object store"):
        StoreSnapshots("s3://bucket/indexes").take()
    whole = _stream(snapshots)
    with pytest.raises(BackupError, match="ended early|broke off"):
        receive_store(io.BytesIO(whole[: len(whole) // 2]), tmp_path / "cut")


def test_compaction_keeps_every_version_while_a_backup_holds_the_store(tmp_path: Path) -> None:
    table = lancedb.connect(tmp_path / "lancedb").create_table("t", pa.table({"n": [1]}))
    table.add(pa.table({"n": [2]}))
    with cleanup_held():
        compact(table, 0.001)
        assert len(table.list_versions()) >= 3
    compact(table, 0.001)
    assert len(table.list_versions()) == 1


def _backup_folder(tmp_path: Path, uploads_root: Path) -> Path:
    folder = tmp_path / "backup"
    (folder / "uploads" / "ix").mkdir(parents=True)
    (folder / "uploads" / "ix" / "a.txt").write_text("alpha")
    store = Store(folder / "docent.db")
    index = store.create_index("Docs")
    store.add_document(filename="a.txt", stored_path=str(uploads_root / "ix" / "a.txt"), sha256="0" * 64, size=5,
                       index_id=index["id"])
    store.close()
    (folder / "backup.json").write_text(json.dumps({"format": 1, "source": {"uploads": str(uploads_root)}}))
    return folder


def test_restore_points_stored_files_at_the_new_upload_folder(tmp_path: Path) -> None:
    folder = _backup_folder(tmp_path, Path("/old/data/uploads"))
    data = tmp_path / "new-data"
    report = restore(folder, data / "docent.db", data, data / "uploads", data / "lancedb")
    assert report.documents == 1 and report.uploads == 1
    rows = sqlite3.connect(data / "docent.db").execute("SELECT stored_path FROM index_documents").fetchall()
    assert rows == [(str((data / "uploads").resolve() / "ix" / "a.txt"),)]
    assert (data / "uploads" / "ix" / "a.txt").read_text() == "alpha"


def test_restore_refuses_a_folder_in_use_or_an_unfinished_backup(tmp_path: Path) -> None:
    folder = _backup_folder(tmp_path, Path("/old/data/uploads"))
    data = tmp_path / "used"
    (data / "uploads").mkdir(parents=True)
    (data / "uploads" / "mine.pdf").write_text("mine")
    with pytest.raises(BackupError, match="not empty"):
        restore(folder, data / "docent.db", data, data / "uploads", data / "lancedb")
    assert not (data / "docent.db").exists() and [p.name for p in (data / "uploads").iterdir()] == ["mine.pdf"]
    (folder / "backup.json").unlink()
    with pytest.raises(BackupError, match="backup.json"):
        read_meta(folder)
