"""The window vectors of an index as rows of their own: what the vector leg searches.

Why a table of its own and not only the chunk table's multivector column:
LanceDB indexes a multivector column with IVF_PQ alone, and a search over it
compares the PQ codes of every window in the probed partitions, then reads
each candidate chunk's whole multivector back from disk to re-score it. At
100,000 chunks that took 10 ms p50, half of it the reads, and at a million
chunks those reads leave the page cache (Documentation/evaluation.md, "A
million chunks"). With one row per window the column takes an HNSW graph
over scalar-quantised vectors (IVF_HNSW_SQ) that LanceDB keeps in memory: 4
ms at 100,000 chunks, and closer to the exact best-window ranking (top 10
agree 0.98 against 0.97, top 50 0.97 against 0.91); past HNSW_MAX_WINDOWS
rows, where that graph would outgrow the memory budget, IVF_PQ re-scored.
A chunk is ranked by its best window, found by keeping the first hit of
each chunk: the same score as the multivector's MaxSim against one query
vector.

Each row repeats its chunk's location columns and block type, so the
compiled prefilter means the same here as on the chunk and window tables.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rag_system.chunking.chunk import Chunk
from rag_system.indexing.windows import LOCATION_FIELDS, replace_rows


VECTORS_SUFFIX = "__vectors"
#: The chunk table's multivector column (one vector per window), the source of a backfill.
MULTIVECTOR_COLUMN = "vectors"

#: Window hits fetched per chunk wanted: a chunk's windows often rank next to
#: each other, and only its best one counts. 4 found 0.97 of the exact top 50
#: chunks at 100,000 chunks, 2 only 0.94 (Documentation/evaluation.md).
OVERFETCH = 4

#: HNSW search beam, grown with the table. LanceDB's default found 0.96 of the
#: exact top 10 at 100,000 chunks (368,000 windows; 400 found 0.98, +0.3 ms) but
#: 0.76 at a million (3.7 million windows, each real chunk among ~100 near
#: copies in the scale benchmark): hybrid nDCG@10 0.290 against 0.322 exact.
#: There 1,850 gave 0.313, 2,960 (this rule) 0.322, 3,700 0.323
#: (Documentation/evaluation.md, "A million chunks").
EF_MIN = 400
EF_MAX = 4000
WINDOWS_PER_EF = 1250

#: HNSW graph degree and build beam: LanceDB's defaults (20, 300), which the
#: scale benchmark measured; the index holds ~0.55 KB per window in memory.
HNSW_M = 20
HNSW_EF_CONSTRUCTION = 300

#: Past this many window rows the index is IVF_PQ, not HNSW. Why: the HNSW
#: graph and its 8-bit vectors stay in LanceDB's index cache, and at a million
#: chunks (3.7 million windows) the RAG API peaked at 6.1 GB under 16 clients
#: against a 2.5 GB budget. PQ codes (48 bytes a window) stay small; their
#: ranking is re-scored with the stored vectors (PQ_REFINE x the hits) over
#: PQ_NPROBES partitions: at a million chunks 0.98 of the exact top 10, 31 ms
#: under load 6, where HNSW needed `ef` ~3,000 for 0.97 (Documentation/evaluation.md).
HNSW_MAX_WINDOWS = 1_000_000
PQ_SUB_VECTORS_DIVISOR = 8  # dimension / 8 sub-vectors: 48 for MiniLM's 384
PQ_NPROBES = 40
PQ_REFINE = 5


def vector_schema(dimension: int) -> pa.Schema:
    return pa.schema([
        *LOCATION_FIELDS,
        pa.field("block_type", pa.string()),
        pa.field("window_index", pa.int32(), nullable=False),
        pa.field("vector", pa.list_(pa.float32(), dimension)),
    ])


def vector_rows(schema: pa.Schema, document_ids: Sequence[str], document_name: str, chunks: Sequence[Chunk],
                window_vectors: Sequence[np.ndarray]) -> pa.Table:
    """The window vector table's rows of one file's chunks: one per window vector (`window_vectors[i]` is
    chunk i's (n_i, d) array). What `WindowVectorTable.add` writes, and a distributed build's task writes
    as a fragment (rag_system/indexing/ray_tasks.py)."""
    dimension = int(schema.field("vector").type.list_size)
    counts = np.array([len(v) for v in window_vectors], dtype=np.int64)
    owner = np.repeat(np.arange(len(chunks)), counts)
    offset = np.arange(len(owner)) - np.repeat(np.cumsum(counts) - counts, counts)

    def per_window(values: list[Any], kind: pa.DataType) -> pa.Array:
        return pa.array(values, kind).take(pa.array(owner))

    flat = np.ascontiguousarray(np.concatenate(window_vectors) if len(chunks) else
                                np.zeros((0, dimension)), dtype=np.float32).reshape(-1)
    return pa.table({
        "chunk_id": per_window([c.chunk_id for c in chunks], pa.string()),
        "document_id": per_window(list(document_ids), pa.string()),
        "document_name": per_window([document_name] * len(chunks), pa.string()),
        "chunk_index": per_window([c.chunk_index for c in chunks], pa.int32()),
        "page_start": per_window([c.page_start for c in chunks], pa.int32()),
        "page_end": per_window([c.page_end for c in chunks], pa.int32()),
        "block_type": per_window([c.block_type for c in chunks], pa.string()),
        "window_index": pa.array(offset.astype(np.int32)),
        "vector": pa.FixedSizeListArray.from_arrays(pa.array(flat), dimension),
    }, schema=schema)


class WindowVectorTable:
    """One row per window vector of an index; written and deleted together with its chunks."""

    def __init__(self, table: Any) -> None:
        self.table = table
        self._rows: int | None = None  # counted once per handle: it only sizes the search beam
        self._kind = ""  # the ANN index type, looked up until found

    @classmethod
    def create(cls, db: Any, name: str, dimension: int) -> WindowVectorTable:
        return cls(db.create_table(name, schema=vector_schema(dimension), exist_ok=True))

    @property
    def dimension(self) -> int:
        return int(self.table.schema.field("vector").type.list_size)

    def delete_documents(self, where: str) -> None:
        self.table.delete(where)

    def add(self, document_ids: Sequence[str], document_name: str, chunks: Sequence[Chunk],
            window_vectors: Sequence[np.ndarray], replacing: str | None = None) -> None:
        """One row per window vector of each chunk (`window_vectors[i]` is chunk i's (n_i, d) array);
        with `replacing` (a filter on the old rows) old and new change places in one commit."""
        data = vector_rows(self.table.schema, document_ids, document_name, chunks, window_vectors)
        if replacing is not None:
            replace_rows(self.table, ["chunk_id", "window_index"], data, replacing)
        elif data.num_rows:
            self.table.add(data)

    def search_beam(self, wanted: int) -> int:
        """The HNSW `ef` for `wanted` hits: one per WINDOWS_PER_EF rows, within EF_MIN..EF_MAX."""
        if self._rows is None:
            self._rows = int(self.table.count_rows())
        return max(wanted, min(EF_MAX, max(EF_MIN, self._rows // WINDOWS_PER_EF)))

    def ann_kind(self) -> str:
        """LanceDB's name of the vector index type ("IvfHnswSq", "IvfPq"), "" without one."""
        if not self._kind:  # looked up again while there is none: another process may build it
            self._kind = next((str(i.index_type) for i in self.table.list_indices()
                               if list(i.columns) == ["vector"]), "")
        return self._kind

    def has_ann_index(self) -> bool:
        return bool(self.ann_kind())

    def create_ann_index(self) -> str:
        """IVF_HNSW_SQ on `vector`, or IVF_PQ past HNSW_MAX_WINDOWS rows; the index type built."""
        from lancedb.index import HnswSq, IvfPq

        self._kind = ""
        if self.table.count_rows() > HNSW_MAX_WINDOWS:
            self.table.create_index("vector", replace=True, config=IvfPq(
                distance_type="cosine", num_sub_vectors=self.dimension // PQ_SUB_VECTORS_DIVISOR))
            return "IVF_PQ"
        self.table.create_index("vector", config=HnswSq(distance_type="cosine", m=HNSW_M,
                                                        ef_construction=HNSW_EF_CONSTRUCTION), replace=True)
        return "IVF_HNSW_SQ"

    @classmethod
    def backfill(cls, db: Any, name: str, dimension: int, chunks: Any,
                 batch_rows: int = 20_000) -> tuple[WindowVectorTable, int]:
        """Create table `name` from a chunk table's multivector column, in one commit: an index built
        before this table existed gains it on its next build, and an interrupted fill leaves no table.
        The table and the rows written."""
        schema = vector_schema(dimension)
        written = 0

        def rows() -> Iterator[pa.RecordBatch]:
            nonlocal written
            for batch in _batches(chunks, batch_rows):
                part = window_vector_rows(pa.Table.from_batches([batch]), schema)
                written += part.num_rows
                yield from part.to_batches()

        reader = pa.RecordBatchReader.from_batches(schema, rows())
        return cls(db.create_table(name, data=reader, schema=schema, mode="overwrite")), written


def _batches(chunks: Any, batch_rows: int) -> Iterator[pa.RecordBatch]:
    columns = [f.name for f in LOCATION_FIELDS] + ["block_type", MULTIVECTOR_COLUMN]
    reader = chunks.search().select(columns).limit(None).to_batches(batch_rows)
    yield from reader


def window_vector_rows(chunks: pa.Table, schema: pa.Schema) -> pa.Table:
    """Chunk rows with a multivector column, one row per window vector (the scale benchmarks use it too)."""
    lists = chunks.column(MULTIVECTOR_COLUMN).combine_chunks()
    counts = pc.fill_null(pc.list_value_length(lists), 0).to_numpy(zero_copy_only=False).astype(np.int64)
    owner = pa.array(np.repeat(np.arange(chunks.num_rows), counts))
    offset = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
    columns = {name: chunks.column(name).take(owner) for name in schema.names if name in chunks.column_names
               and name != MULTIVECTOR_COLUMN}
    columns["window_index"] = pa.array(offset.astype(np.int32))
    columns["vector"] = lists.flatten()
    return pa.table({name: columns[name] for name in schema.names}, schema=schema)


def multivector_column(per_chunk: Sequence[np.ndarray], dim: int) -> pa.Array:
    """A list<fixed_size_list<float32, dim>> array: one list of vectors per chunk (the chunk table's
    multivector column; the same vectors as this table's rows, grouped by chunk)."""
    counts = [int(v.shape[0]) for v in per_chunk]
    if min(counts, default=1) < 1:
        raise ValueError("every chunk needs at least one window vector")
    flat = pa.array(np.ascontiguousarray(np.concatenate(per_chunk), dtype=np.float32).reshape(-1))
    offsets = pa.array(np.concatenate([[0], np.cumsum(counts)]).astype(np.int32))
    return pa.ListArray.from_arrays(offsets, pa.FixedSizeListArray.from_arrays(flat, dim))
