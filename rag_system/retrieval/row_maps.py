"""Each index's row-address maps (rag_system/retrieval/chunk_runs.py): made in the background, checked per version.

Why in the background: a map is a scan of a table's `chunk_id` column (0.1 s
per table at 100,000 chunks, 0.9 s at a million), and a question never
waits for one: until it is there, a leg reads `chunk_id` from LanceDB as it
always did, and the ids of rows written after the scan are read for just
those hits (and the map is made again).

Why checked per version: a table dropped and created again under its name
(a changed vector layout, a deleted index built anew, or, on a query
replica, the writer doing either) reuses addresses for other rows. When a
leg finds its table at a version the map was not checked at, it reads a
sample of the map's addresses back (one take, once per version); a map
that disagrees is dropped and made again. The one window this leaves open
is a table made anew between a leg's search and its version check, with
the same version number as before; a chunk found through it would still be
read and cited by its own id and text (Documentation/indexing.md, "Row maps").
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from rag_system.retrieval.chunk_runs import ChunkRuns, scan
from rag_system.retrieval.lance_loop import submit

log = logging.getLogger(__name__)

#: A map is made at most this often per table, so that a build's stream of commits does not keep scanning.
REBUILD_MIN_S = 2.0


class RowMaps:
    """The maps of one index's window tables, by table name; replaced whole, never changed in place."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        # Per table, its map and the table version it was last found right at (None: not yet checked).
        self._held: dict[str, tuple[ChunkRuns, int | None]] = {}
        self._building: set[str] = set()
        self._started: dict[str, float] = {}

    def current(self, name: str) -> ChunkRuns | None:
        with self._changed:
            held = self._held.get(name)
        return held[0] if held is not None else None

    def hold(self, name: str, runs: ChunkRuns, checked_at: int | None) -> None:
        """Use `runs` for `name` from now on, known right at table version `checked_at` (None: not checked)."""
        with self._changed:
            self._held[name] = (runs, checked_at)

    def checked(self, name: str, runs: ChunkRuns, version: int) -> bool:
        with self._changed:
            held = self._held.get(name)
        return held is not None and held[0] is runs and held[1] == version

    def mark(self, name: str, runs: ChunkRuns, version: int, agrees: bool) -> None:
        """Record a check of `runs` at `version`: kept if it agreed, dropped if not."""
        with self._changed:
            held = self._held.get(name)
            if held is None or held[0] is not runs:
                return
            if agrees:
                self._held[name] = (runs, version)
            else:
                del self._held[name]

    def request(self, name: str, handle: Any) -> None:
        """Make `name`'s map again on a background thread, unless one is being made or was just started."""
        now = time.monotonic()
        with self._changed:
            if name in self._building or now - self._started.get(name, -REBUILD_MIN_S) < REBUILD_MIN_S:
                return
            self._building.add(name)
            self._started[name] = now
        threading.Thread(target=self._build, args=(name, handle), daemon=True, name="docent-row-map").start()

    def wait(self, timeout_s: float = 60.0) -> None:
        """Until no map is being made (tests, benchmarks: a map requested now is then there)."""
        with self._changed:
            self._changed.wait_for(lambda: not self._building, timeout_s)

    def _build(self, name: str, handle: Any) -> None:
        runs: ChunkRuns | None = None
        t0 = time.perf_counter()
        try:
            runs = submit(scan(handle)).result()
        except Exception as exc:  # the legs go on reading ids from LanceDB
            log.warning("row map of %s not made: %s", name, exc)
        finally:
            with self._changed:
                self._building.discard(name)
                if runs is not None:
                    self._held[name] = (runs, runs.version)
                self._changed.notify_all()
        if runs is not None:
            log.info("row map of %s: %d runs, %.1f MB, %.2f s", name, len(runs.starts), runs.nbytes / 2**20,
                     time.perf_counter() - t0)


async def identify(maps: RowMaps, handle: Any, runs: ChunkRuns, hits: pa.Table) -> pa.Table:
    """`hits` (with `_rowid`) with `chunk_id` from `runs`, read from `handle` only where the map cannot say.

    Hits whose rows are gone by the time they are read (a delete between
    the search and the read) are left out, as the rows lookup would.
    """
    name = handle.name
    version = await handle.version()
    if not maps.checked(name, runs, version):
        sample = runs.sample()  # an empty map (of an empty table) has nothing to read back
        agrees = bool(len(sample)) and runs.agrees(
            await handle.take_row_ids(sample.tolist()).select(["chunk_id"]).with_row_id().to_arrow())
        maps.mark(name, runs, version, agrees)
        if not agrees:
            log.info("row map of %s does not match version %d; making it again", name, version)
            maps.request(name, handle)
            return await _read_ids(handle, hits, pa.nulls(hits.num_rows, pa.string()))
    ids, missed = runs.lookup(hits.column("_rowid").to_numpy())
    if missed.any():
        maps.request(name, handle)  # rows written after the scan
        return await _read_ids(handle, hits, ids)
    return hits.drop_columns(["_rowid"]).append_column("chunk_id", ids)


async def _read_ids(handle: Any, hits: pa.Table, ids: pa.Array) -> pa.Table:
    """Fill the null `ids` of `hits` with the rows' `chunk_id` from LanceDB; drop the hits it no longer has."""
    rowids = hits.column("_rowid")
    wanted = pc.filter(rowids, pc.is_null(ids))
    if len(wanted):
        read = await handle.take_row_ids(wanted.to_pylist()).select(["chunk_id"]).with_row_id().to_arrow()
        ids = pc.coalesce(ids, read.column("chunk_id").take(pc.index_in(rowids, value_set=read.column("_rowid"))))
    return hits.drop_columns(["_rowid"]).append_column("chunk_id", ids).filter(pc.is_valid(ids))

