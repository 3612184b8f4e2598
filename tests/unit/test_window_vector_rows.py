"""Chunk rows with a multivector column become one row per window vector, in order, with the chunk's columns."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from rag_system.indexing.window_vectors import vector_schema, window_vector_rows

DIM = 4


def _chunks(counts: list[int]) -> tuple[pa.Table, list[np.ndarray]]:
    rng = np.random.default_rng(3)
    multi = [rng.standard_normal((n, DIM)).astype(np.float32) for n in counts]
    flat = pa.FixedSizeListArray.from_arrays(pa.array(np.concatenate(multi).reshape(-1)), DIM)
    offsets = pa.array(np.concatenate([[0], np.cumsum(counts)]).astype(np.int32))
    n = len(counts)
    table = pa.table({
        "chunk_id": [f"c{i}" for i in range(n)], "document_id": ["d1"] * (n - 1) + ["d2"],
        "document_name": ["a.md"] * n, "chunk_index": pa.array(range(n), pa.int32()),
        "page_start": pa.array([i + 1 for i in range(n)], pa.int32()),
        "page_end": pa.array([i + 2 for i in range(n)], pa.int32()),
        "heading_path": ["h"] * n, "block_type": ["paragraph"] * (n - 1) + ["code"], "text": ["t"] * n,
        "vectors": pa.ListArray.from_arrays(offsets, flat),
    })
    return table, multi


def test_each_window_vector_is_a_row_under_its_chunk() -> None:
    chunks, multi = _chunks([3, 1, 2])
    rows = window_vector_rows(chunks, vector_schema(DIM))
    assert rows.schema == vector_schema(DIM)
    assert rows.column("chunk_id").to_pylist() == ["c0", "c0", "c0", "c1", "c2", "c2"]
    assert rows.column("window_index").to_pylist() == [0, 1, 2, 0, 0, 1]
    assert rows.column("page_start").to_pylist() == [1, 1, 1, 2, 3, 3]
    assert rows.column("block_type").to_pylist()[-1] == "code"
    assert rows.column("document_id").to_pylist()[-2:] == ["d2", "d2"]
    vectors = np.array(rows.column("vector").to_pylist(), dtype=np.float32)
    assert np.array_equal(vectors, np.concatenate(multi))


def test_no_chunks_no_rows() -> None:
    chunks, _ = _chunks([2])
    assert window_vector_rows(chunks.slice(0, 0), vector_schema(DIM)).num_rows == 0
