"""Distractor rows for the scale benchmark (`eval.bench_scale_1m`).

Why synthetic rows and not more documents: a million real chunks would take
days to embed on 2 cores, and no corpus of that size ships here. So the real
rows of the gold corpora go in unchanged (their gold questions are what the
benchmark scores), and the rest of the table is distractors derived from them:

- each distractor takes a source chunk's location columns, its windows and its
  vectors, each vector moved by Gaussian noise of norm `noise` and
  re-normalised (cosine ~0.94 to the source at the default 0.35), so the
  vector leg sees a dense neighbourhood around every real chunk, as a
  large library of similar documents would give it;
- its text (chunk and every window) is the first half of the source's words
  followed by the second half of a random donor chunk's, so the full-text
  index gets a realistic vocabulary with term statistics that differ from
  copy to copy, instead of a million duplicates (which BM25 would rank as
  exact ties);
- its ids, document names and source paths are new (`x<n>`, `distractor-<doc>.md`), so a
  distractor never counts as the gold document's chunk unless its own text
  contains the expected string (the metric is text containment).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

#: Chunks per synthetic document (a distractor document has this many chunks).
CHUNKS_PER_DOCUMENT = 40


@dataclass(frozen=True)
class Pool:
    """Source rows: every real chunk, its windows grouped by chunk, in one place."""

    chunks: pa.Table
    windows: pa.Table  # sorted by chunk position, then window_index
    window_start: np.ndarray  # per chunk: first row in `windows`
    window_count: np.ndarray  # per chunk: number of windows


def make_pool(chunk_tables: list[pa.Table], window_tables: list[pa.Table]) -> Pool:
    chunks = pa.concat_tables(chunk_tables, promote_options="default").combine_chunks()
    windows = pa.concat_tables(window_tables, promote_options="default").combine_chunks()
    position = {cid: i for i, cid in enumerate(chunks.column("chunk_id").to_pylist())}
    pos = np.array([position.get(c, -1) for c in windows.column("chunk_id").to_pylist()], dtype=np.int64)
    keep = pos >= 0
    windows = windows.filter(pa.array(keep))
    pos = pos[keep]
    order = np.lexsort((windows.column("window_index").to_numpy(), pos))
    windows = windows.take(pa.array(order))
    pos = pos[order]
    count = np.bincount(pos, minlength=chunks.num_rows).astype(np.int64)
    start = np.concatenate([[0], np.cumsum(count)[:-1]]).astype(np.int64)
    return Pool(chunks, windows, start, count)


def _half_and_half(first: list[str], second: list[str]) -> list[str]:
    out = []
    for a, b in zip(first, second):
        wa, wb = a.split(" "), b.split(" ")
        out.append(" ".join(wa[: max(1, len(wa) // 2)] + wb[len(wb) // 2:]))
    return out


def _perturb(values: np.ndarray, dim: int, noise: float, rng: np.random.Generator) -> np.ndarray:
    """Unit vectors moved by noise of norm ~`noise`, re-normalised."""
    vecs = values.reshape(-1, dim)
    moved = vecs + rng.standard_normal(vecs.shape, dtype=np.float32) * np.float32(noise / np.sqrt(dim))
    moved /= np.linalg.norm(moved, axis=1, keepdims=True)
    return moved.astype(np.float32).reshape(-1)


def _fsl(values: np.ndarray, dim: int) -> pa.FixedSizeListArray:
    return pa.FixedSizeListArray.from_arrays(pa.array(values, pa.float32()), dim)


def _vector_columns(chunks: pa.Table, dim: int, noise: float, rng: np.random.Generator) -> dict[str, pa.Array]:
    out: dict[str, pa.Array] = {}
    if "vector" in chunks.column_names:
        flat = chunks.column("vector").combine_chunks().flatten().to_numpy(zero_copy_only=False)
        out["vector"] = _fsl(_perturb(flat, dim, noise, rng), dim)
    if "vectors" in chunks.column_names:
        lists = chunks.column("vectors").combine_chunks()
        counts = pc.list_value_length(lists).to_numpy(zero_copy_only=False).astype(np.int32)
        flat = lists.flatten().flatten().to_numpy(zero_copy_only=False)
        offsets = pa.array(np.concatenate([[0], np.cumsum(counts)]).astype(np.int32))
        out["vectors"] = pa.ListArray.from_arrays(offsets, _fsl(_perturb(flat, dim, noise, rng), dim))
    return out


def distractor_batches(pool: Pool, total: int, *, dim: int, noise: float = 0.35, seed: int = 7,
                       batch: int = 20_000, first_id: int = 0) -> Iterator[tuple[pa.Table, pa.Table]]:
    """(chunk rows, window rows) batches adding up to `total` distractors; deterministic for a seed."""
    rng = np.random.default_rng(seed)
    n = pool.chunks.num_rows
    made = 0
    while made < total:
        size = min(batch, total - made)
        src = rng.integers(0, n, size)
        donor = rng.integers(0, n, size)
        seq = np.arange(first_id + made, first_id + made + size)
        ids = pa.array([f"x{s:07d}" for s in seq])
        docs = pa.array([f"xdoc{s // CHUNKS_PER_DOCUMENT:06d}" for s in seq])
        names = pa.array([f"distractor-{s // CHUNKS_PER_DOCUMENT:06d}.md" for s in seq])
        chunks = pool.chunks.take(pa.array(src))
        text = _half_and_half(chunks.column("text").to_pylist(),
                              pool.chunks.column("text").take(pa.array(donor)).to_pylist())
        columns = {"chunk_id": ids, "document_id": docs, "document_name": names, "text": pa.array(text),
                   **_vector_columns(chunks, dim, noise, rng)}
        if "metadata" in chunks.column_names:
            columns["metadata"] = pa.array(_metadata(chunks.column("metadata").to_pylist(), names.to_pylist()))
        for name, values in columns.items():
            chunks = chunks.set_column(chunks.schema.get_field_index(name), name, values)
        yield chunks, _windows(pool, src, donor, ids, docs, names)
        made += size


def _metadata(metadata: list[str | None], names: list[str]) -> list[str]:
    """The source's metadata under the distractor's own file: the engine takes two document ids
    under one `source_path` for two versions of a file and searches again (`mixed_versions`)."""
    out = []
    for meta, name in zip(metadata, names):
        try:
            parsed = json.loads(meta or "{}")
        except ValueError:
            parsed = {}
        parsed = parsed if isinstance(parsed, dict) else {}
        parsed["source_path"] = f"/distractors/{name}"
        out.append(json.dumps(parsed))
    return out


def _windows(pool: Pool, src: np.ndarray, donor: np.ndarray, ids: pa.Array, docs: pa.Array,
             names: pa.Array) -> pa.Table:
    """Each distractor gets its source's windows, mixed window by window with its donor's."""
    counts = pool.window_count[src]
    owner = np.repeat(np.arange(len(src)), counts)
    offset = np.arange(len(owner)) - np.repeat(np.cumsum(counts) - counts, counts)
    rows = pool.window_start[src][owner] + offset
    donor_counts = np.maximum(pool.window_count[donor], 1)[owner]
    donor_rows = pool.window_start[donor][owner] + offset % donor_counts
    windows = pool.windows.take(pa.array(rows))
    donor_text = pool.windows.column("text").take(pa.array(donor_rows)).to_pylist()
    text = pa.array(_half_and_half(windows.column("text").to_pylist(), donor_text))
    take = pa.array(owner)
    columns: dict[str, Any] = {"chunk_id": ids.take(take), "document_id": docs.take(take),
                               "document_name": names.take(take), "text": text, "text_exact": text}
    for name, values in columns.items():
        windows = windows.set_column(windows.schema.get_field_index(name), name, values)
    return windows
