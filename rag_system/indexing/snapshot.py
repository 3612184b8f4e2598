"""A consistent copy of the local LanceDB store while the RAG API reads and writes it (`POST /backup`).

Why it is safe without stopping the writer: a Lance table is a folder of immutable files plus one
manifest per version (`_versions/`); a version exists once its manifest is written, and the files it
references are never changed, only deleted by cleanup after a newer version replaced it. So a table
at version N is its manifests up to N and the files they reference. A snapshot

1. reads each table's newest version from its `_versions/` folder, in the reverse of the order a
   build commits them (manifest, sync state, chunks, window vectors, windows: `store.add_chunks`,
   `GroupWriter._write`), so the copy never holds a manifest row without its document's rows: it is
   a state a crash of the writer between two commits could have left, which the next build of that
   index completes (Documentation/indexing.md, "Incremental indexing");
2. hard-links every file of each table into a staging folder next to the store (a link keeps the
   bytes when compaction deletes the file later), leaving out manifests newer than the version
   read and the latest-version hint, so the copy opens at that version. Meanwhile this process's
   compactions keep every version (`connection.cleanup_held`), so no file of a version being
   linked is deleted; builds and questions go on;
3. starts again (up to `ATTEMPTS` times) should a file still vanish while it is linked and its
   table has moved past the version read (a writer in another process, which the hold cannot stop).

The staging folder is streamed as a tar (`tar_stream`) and removed afterwards. Where the store is
on another file system than its parent folder, files are copied instead of linked (slower, with the
same check). An object-store URI (`s3://`) is refused: use the bucket's own versioning there.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import shutil
import tarfile
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from common.errors import DomainError
from rag_system.indexing.connection import cleanup_held

log = logging.getLogger(__name__)

ATTEMPTS = 5
CHUNK_BYTES = 1 << 20
#: The last member of every snapshot stream; a stream without it was cut off.
SNAPSHOT_MEMBER = "snapshot.json"
_U64_MAX = 2**64 - 1
#: Commit order of a build, newest-committed first: the order versions are read in.
_SUFFIX_ORDER = ("__manifest", "__sync", "", "__vectors", "__windows")
_HINT = "latest_version_hint.json"


class SnapshotError(DomainError, RuntimeError):
    """The store cannot be copied now (another backup runs, it is not local, it keeps changing)."""

    status, code = 409, "backup_unavailable"


@dataclass(frozen=True)
class StoreSnapshot:
    """A staged copy: `tables` maps each table folder name to the version it holds."""

    root: Path
    tables: dict[str, int]
    files: int
    bytes: int
    attempts: int
    taken_at: float = field(default_factory=time.time)

    def describe(self) -> dict[str, object]:
        return {"format": 1, "tables": dict(self.tables), "files": self.files, "bytes": self.bytes,
                "attempts": self.attempts, "taken_at": self.taken_at}


def manifest_version(name: str) -> int | None:
    """The version a `_versions/` file name holds: `<u64::MAX - N>.manifest` (Lance's V2 naming) or `<N>.manifest`."""
    stem, dot, ext = name.partition(".")
    if ext != "manifest" or not dot or not stem.isdigit():
        return None
    number = int(stem)
    return _U64_MAX - number if number > 2**63 else number


def newest_version(table_dir: Path) -> int | None:
    versions = [v for v in (manifest_version(p.name) for p in _listing(table_dir / "_versions")) if v is not None]
    return max(versions) if versions else None


def _listing(folder: Path) -> list[Path]:
    try:
        return list(folder.iterdir())
    except FileNotFoundError:
        return []


def commit_rank(table_dir_name: str) -> int:
    """Position of a table in the read order (see the module docstring); unknown kinds come last."""
    stem = table_dir_name.removesuffix(".lance")
    for rank, suffix in enumerate(_SUFFIX_ORDER):
        if suffix and stem.endswith(suffix):
            return rank
    return _SUFFIX_ORDER.index("") if "__" not in stem else len(_SUFFIX_ORDER)


class StoreSnapshots:
    """Takes snapshots of one local store, one at a time (a second backup meanwhile gets a 409)."""

    def __init__(self, uri: str) -> None:
        self.uri = uri
        self._busy = threading.Lock()

    def take(self) -> StoreSnapshot:
        if "://" in self.uri:
            raise SnapshotError(f"the index store is at {self.uri}, an object store: back it up with the "
                                "bucket's own versioning or snapshots (Documentation/operations.md)")
        if not self._busy.acquire(blocking=False):
            raise SnapshotError("a backup of the index store is already running; try again when it is done")
        try:
            store = Path(self.uri)
            self._remove_stale(store)
            staging = store.parent / f".{store.name}.backup-{uuid.uuid4().hex[:12]}"
            with cleanup_held():
                return _stage(store, staging)
        except BaseException:
            self._busy.release()
            raise

    def release(self, snapshot: StoreSnapshot) -> None:
        shutil.rmtree(snapshot.root, ignore_errors=True)
        self._busy.release()

    @staticmethod
    def _remove_stale(store: Path) -> None:
        """Staging folders a killed RAG API left behind (only one backup runs at a time, so none is live)."""
        for old in _listing(store.parent):
            if old.name.startswith(f".{store.name}.backup-"):
                shutil.rmtree(old, ignore_errors=True)


def _stage(store: Path, staging: Path) -> StoreSnapshot:
    for attempt in range(1, ATTEMPTS + 1):
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        tables = sorted((p for p in _listing(store) if p.name.endswith(".lance") and p.is_dir()),
                        key=lambda p: (commit_rank(p.name), p.name))
        pinned = {t.name: v for t in tables if (v := newest_version(t)) is not None}
        moved: list[str] = []
        files = size = 0
        for name, version in pinned.items():
            table = store / name
            linked, nbytes, vanished = _link_table(table, staging / name, version)
            files, size = files + linked, size + nbytes
            if not table.is_dir():  # dropped meanwhile (DELETE /indexes/<name>): not in the copy
                shutil.rmtree(staging / name, ignore_errors=True)
                pinned[name] = -1
            elif vanished and (newest_version(table) or 0) > version:
                moved.append(name)
        if not moved:
            kept = {n: v for n, v in pinned.items() if v >= 0}
            return StoreSnapshot(staging, kept, files, size, attempt)
        log.info("backup: %s changed while being copied; starting the snapshot again", ", ".join(moved))
    shutil.rmtree(staging, ignore_errors=True)
    raise SnapshotError(f"the index store kept changing under the backup ({ATTEMPTS} attempts); "
                        "try again when no index build is compacting")


def _link_table(table: Path, target: Path, version: int) -> tuple[int, int, bool]:
    """(files, bytes, whether a file vanished) after linking `table` at `version` into `target`."""
    files = size = 0
    vanished = False
    for dirpath, _dirs, names in os.walk(table):
        here = Path(dirpath)
        rel = here.relative_to(table)
        for name in names:
            if rel.name == "_versions" and len(rel.parts) == 1:
                if name == _HINT or (manifest_version(name) or 0) > version:
                    continue
            dest = target / rel / name
            dest.parent.mkdir(parents=True, exist_ok=True)
            try:
                nbytes = _link_or_copy(here / name, dest)
            except FileNotFoundError:
                vanished = True
                continue
            files, size = files + 1, size + nbytes
    return files, size, vanished


def _link_or_copy(src: Path, dest: Path) -> int:
    try:
        os.link(src, dest)
    except OSError as exc:
        if exc.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK, errno.ENOTSUP):
            raise
        shutil.copy2(src, dest)
    return dest.stat().st_size


class SnapshotStream:
    """The HTTP body of a snapshot: iterating sends the tar; `close()` (the server calls it however the
    response ended, even before the first byte) removes the staging folder and ends the backup."""

    def __init__(self, snapshots: StoreSnapshots, snapshot: StoreSnapshot) -> None:
        self.snapshots, self.snapshot = snapshots, snapshot
        self._closed = False
        self._lock = threading.Lock()

    def __iter__(self) -> Iterator[bytes]:
        return tar_stream(self.snapshot)

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self.snapshots.release(self.snapshot)


def tar_stream(snapshot: StoreSnapshot) -> Iterator[bytes]:
    """The staged tables as an uncompressed tar, `snapshot.json` last."""
    for path in sorted(p for p in snapshot.root.rglob("*") if p.is_file()):
        yield from _member(path, path.relative_to(snapshot.root).as_posix())
    body = json.dumps(snapshot.describe(), indent=2).encode()
    info = tarfile.TarInfo(SNAPSHOT_MEMBER)
    info.size, info.mtime, info.mode = len(body), int(time.time()), 0o644
    yield info.tobuf(tarfile.PAX_FORMAT)
    yield body + _padding(len(body))
    yield b"\0" * (2 * tarfile.BLOCKSIZE)


def _member(path: Path, arcname: str) -> Iterator[bytes]:
    st = path.stat()
    info = tarfile.TarInfo(arcname)
    info.size, info.mtime, info.mode = st.st_size, int(st.st_mtime), 0o644
    yield info.tobuf(tarfile.PAX_FORMAT)
    left = st.st_size
    with path.open("rb") as handle:
        while left > 0:
            chunk = handle.read(min(CHUNK_BYTES, left))
            if not chunk:  # cannot happen to a committed Lance file; keep the archive well-formed anyway
                log.warning("backup: %s shrank while it was sent", arcname)
                chunk = b"\0" * left
            left -= len(chunk)
            yield chunk
    yield _padding(st.st_size)


def _padding(size: int) -> bytes:
    return b"\0" * ((tarfile.BLOCKSIZE - size % tarfile.BLOCKSIZE) % tarfile.BLOCKSIZE)
