"""A window row's chunk id from its row address, held in memory, so that a leg need not read `chunk_id`.

Why: each leg read the `chunk_id` of every hit from LanceDB (150 full-text
hits per ranking, 200 vector hits), a take of scattered rows that cost
~1.2-1.5 ms a leg; at 100,000 chunks the first stage without those reads
took 16.8-17.1 ms p50 against 20.4 (Documentation/evaluation.md, "Sixth
round"). A hit's `_rowid` comes with it for nothing.

Without stable row ids, LanceDB's row id is the row's address (fragment id
<< 32 | offset). A fragment's rows never change in a table's history:
appends and compaction write fragments with new ids (an overwrite keeps
counting them), a delete only hides rows. So an address names the same row
for as long as the table is not dropped and created again under its name,
which `agrees` catches from a sample of the addresses read back
(`row_maps.identify`, at each table version a leg finds).

The map is held as runs of consecutive addresses of one chunk (a chunk's
windows are written together), so it grows with the chunks, not the
windows: at a million chunks ~28 MB a table (16-byte ids packed from their
32 hex digits, an address and a length per run).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

#: Addresses read back per validation: each fragment's first run, then runs spread over the map.
SAMPLE = 64
_HEX = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)
_NIBBLE = np.full(256, 255, dtype=np.uint8)
_NIBBLE[_HEX] = np.arange(16, dtype=np.uint8)


@dataclass(frozen=True, eq=False)  # a map is one object: compared by identity, never element-wise
class ChunkRuns:
    """Runs of a table's rows, ascending by address: `starts[i]`..`starts[i] + lengths[i]` hold chunk `ids[i]`."""

    starts: np.ndarray  # uint64 row addresses
    lengths: np.ndarray  # uint32
    ids: pa.Array  # fixed_size_binary(16) (packed hex ids) or string
    version: int  # the table version scanned (or a later one)

    @property
    def nbytes(self) -> int:
        return int(self.starts.nbytes + self.lengths.nbytes + self.ids.nbytes)

    def lookup(self, rowids: np.ndarray) -> tuple[pa.Array, np.ndarray]:
        """The chunk id of each address (null where the map has none) and the mask of those it has not."""
        rowids = np.asarray(rowids, dtype=np.uint64)
        if not len(self.starts):
            return pa.nulls(len(rowids), pa.string()), np.ones(len(rowids), dtype=bool)
        pos = np.searchsorted(self.starts, rowids, side="right").astype(np.int64) - 1
        safe = np.maximum(pos, 0)
        found = (pos >= 0) & (rowids - self.starts[safe] < self.lengths[safe])
        ids = _unpack(self.ids.take(pa.array(safe)))
        return pc.if_else(pa.array(found), ids, pa.nulls(len(ids), pa.string())), ~found

    def sample(self) -> np.ndarray:
        """Addresses to read back: every fragment's first run and up to SAMPLE runs spread over the rest."""
        if not len(self.starts):
            return self.starts
        fragments = self.starts >> np.uint64(32)
        first = np.flatnonzero(np.r_[True, fragments[1:] != fragments[:-1]])
        spread = np.linspace(0, len(self.starts) - 1, min(SAMPLE, len(self.starts))).astype(np.int64)
        return self.starts[np.union1d(first[:SAMPLE * 4], spread)]

    def agrees(self, read: pa.Table) -> bool:
        """Whether rows read back at sampled addresses (`_rowid`, `chunk_id`) hold the chunks the map says.

        Rows a delete hid are simply missing; none found at all means the
        fragments are gone (compacted, or the table was made anew).
        """
        if read.num_rows == 0:
            return False
        ids, missed = self.lookup(read.column("_rowid").to_numpy())
        return not missed.any() and bool(pc.all(pc.equal(ids, read.column("chunk_id"))).as_py())


async def scan(handle: Any) -> ChunkRuns:
    """The runs of `handle`'s rows (an asynchronous LanceDB table), streamed batch by batch.

    The version is read first: the scan sees that one or a later one of the
    same table, and a later one only adds rows the map then lacks. Runs are
    appended to a few growing buffers, not kept as one small array per batch
    (LanceDB streams 1,024 rows a batch): thousands of small pieces left the
    process 180 MB larger after the two maps of a million-chunk index.
    """
    version = await handle.version()
    stream = await handle.query().select(["chunk_id"]).with_row_id().to_batches()
    starts, lengths = _Growing(np.uint64), _Growing(np.uint32)
    id_lengths, id_bytes = _Growing(np.int64), _Growing(np.uint8)
    async for batch in stream:
        if not batch.num_rows:
            continue
        rows = batch.column("_rowid").to_numpy().astype(np.uint64)
        chunk = batch.column("chunk_id")
        if len(rows) > 1 and not (rows[1:] > rows[:-1]).all():
            order = np.argsort(rows, kind="stable")
            rows, chunk = rows[order], chunk.take(pa.array(order))
        new = np.ones(len(rows), dtype=bool)
        if len(rows) > 1:
            changed = pc.not_equal(chunk.slice(1), chunk.slice(0, len(rows) - 1)).to_numpy(zero_copy_only=False)
            new[1:] = (rows[1:] != rows[:-1] + np.uint64(1)) | changed
        first = np.flatnonzero(new)
        starts.extend(rows[first])
        lengths.extend(np.diff(np.append(first, len(rows))))
        named = chunk.take(pa.array(first)).cast(pa.large_string())
        offsets = np.frombuffer(named.buffers()[1], dtype=np.int64)[named.offset:named.offset + len(named) + 1]
        id_lengths.extend(np.diff(offsets))
        id_bytes.extend(np.frombuffer(named.buffers()[2], dtype=np.uint8)[offsets[0]:offsets[-1]])
    offsets = np.concatenate([np.zeros(1, np.int64), np.cumsum(id_lengths.array())])
    ids = pa.LargeStringArray.from_buffers(len(offsets) - 1, pa.py_buffer(offsets), pa.py_buffer(id_bytes.array()))
    return _assemble(starts.array(), lengths.array(), ids.cast(pa.string()), version)


class _Growing:
    """A NumPy array appended to in place, its capacity doubled as it fills."""

    def __init__(self, dtype: Any) -> None:
        self._data = np.empty(1 << 12, dtype=dtype)
        self._size = 0

    def extend(self, values: np.ndarray) -> None:
        end = self._size + len(values)
        if end > len(self._data):
            grown = np.empty(max(end, 2 * len(self._data)), dtype=self._data.dtype)
            grown[:self._size] = self._data[:self._size]
            self._data = grown
        self._data[self._size:end] = values
        self._size = end

    def array(self) -> np.ndarray:
        """The values appended, in a buffer of their own size (the spare capacity is given back)."""
        return self._data[:self._size].copy()


def _assemble(starts: np.ndarray, lengths: np.ndarray, ids: pa.Array, version: int) -> ChunkRuns:
    if len(starts) > 1 and not (starts[1:] > starts[:-1]).all():  # batches out of order
        order = np.argsort(starts, kind="stable")
        starts, lengths, ids = starts[order], lengths[order], ids.take(pa.array(order))
    return ChunkRuns(starts, lengths, _pack(ids), version)


def _pack(ids: pa.Array) -> pa.Array:
    """32 lowercase hex digits each (the ids the chunker makes) as 16 bytes; anything else stays a string."""
    if len(ids) == 0 or ids.null_count or not pc.all(pc.equal(pc.binary_length(ids), 32)).as_py():
        return ids
    offsets = np.frombuffer(ids.buffers()[1], dtype=np.int32)[ids.offset:ids.offset + len(ids) + 1]
    digits = np.frombuffer(ids.buffers()[2], dtype=np.uint8)[offsets[0]:offsets[-1]].reshape(-1, 32)
    nibbles = _NIBBLE[digits]
    if (nibbles > 15).any():
        return ids
    packed = (nibbles[:, 0::2] << 4) | nibbles[:, 1::2]
    return pa.FixedSizeBinaryArray.from_buffers(pa.binary(16), len(ids), [None, pa.py_buffer(packed.tobytes())])


def _unpack(ids: pa.Array) -> pa.Array:
    """`_pack`'s ids back as the hex strings the tables hold."""
    if not pa.types.is_fixed_size_binary(ids.type):
        return ids
    count = len(ids)
    raw = np.frombuffer(ids.buffers()[1], dtype=np.uint8)[ids.offset * 16:(ids.offset + count) * 16]
    digits = _HEX[np.stack([raw >> 4, raw & 15], axis=-1).reshape(count, 32)]
    offsets = np.arange(0, 32 * (count + 1), 32, dtype=np.int32)
    return pa.StringArray.from_buffers(count, pa.py_buffer(offsets.tobytes()), pa.py_buffer(digits.tobytes()))
