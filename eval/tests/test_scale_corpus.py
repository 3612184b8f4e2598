"""The scale benchmark's distractors: as many as asked, windows following their chunk, text mixed, vectors moved."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from eval.scale_corpus import distractor_batches, make_pool

DIM = 8


def _unit(rng: np.random.Generator, n: int) -> np.ndarray:
    v = rng.standard_normal((n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def _source(n_chunks: int, windows_per_chunk: list[int]) -> tuple[pa.Table, pa.Table]:
    rng = np.random.default_rng(1)
    ids = [f"c{i}" for i in range(n_chunks)]
    texts = [" ".join(f"w{i}_{k}" for k in range(10)) for i in range(n_chunks)]
    multi = [_unit(rng, max(1, windows_per_chunk[i])) for i in range(n_chunks)]
    fsl = pa.FixedSizeListArray.from_arrays(pa.array(np.concatenate(multi).reshape(-1)), DIM)
    offsets = pa.array(np.concatenate([[0], np.cumsum([len(m) for m in multi])]).astype(np.int32))
    chunks = pa.table({"chunk_id": ids, "document_id": ["d"] * n_chunks, "document_name": ["d.md"] * n_chunks,
                       "text": texts,
                       "vector": pa.FixedSizeListArray.from_arrays(pa.array(_unit(rng, n_chunks).reshape(-1)), DIM),
                       "vectors": pa.ListArray.from_arrays(offsets, fsl)})
    rows = [(ids[i], w, f"{texts[i]} window{w}") for i in range(n_chunks) for w in range(windows_per_chunk[i])]
    rows.reverse()  # stored out of order: the pool must sort them back under their chunk
    windows = pa.table({"chunk_id": [r[0] for r in rows], "document_id": ["d"] * len(rows),
                        "document_name": ["d.md"] * len(rows), "window_index": pa.array([r[1] for r in rows], pa.int32()),
                        "text": [r[2] for r in rows], "text_exact": [r[2] for r in rows]})
    return chunks, windows


def test_distractors_add_up_and_keep_their_windows_with_them() -> None:
    chunks, windows = _source(5, [3, 1, 2, 4, 2])
    pool = make_pool([chunks], [windows])
    assert pool.window_count.tolist() == [3, 1, 2, 4, 2]
    batches = list(distractor_batches(pool, 23, dim=DIM, batch=10, first_id=100))
    made = pa.concat_tables([c for c, _ in batches])
    made_windows = pa.concat_tables([w for _, w in batches])
    assert [c.num_rows for c, _ in batches] == [10, 10, 3]
    ids = made.column("chunk_id").to_pylist()
    assert len(set(ids)) == 23 and ids[0] == "x0000100"
    assert not set(ids) & set(chunks.column("chunk_id").to_pylist())
    # every distractor has as many windows as its vectors say its source had, under its own id and document
    per_chunk = {cid: 0 for cid in ids}
    for cid in made_windows.column("chunk_id").to_pylist():
        per_chunk[cid] += 1
    lengths = pa.compute.list_value_length(made.column("vectors")).to_pylist()
    assert [per_chunk[cid] for cid in ids] == lengths
    documents = dict(zip(ids, made.column("document_id").to_pylist()))
    assert all(documents[c] == d for c, d in zip(made_windows.column("chunk_id").to_pylist(),
                                                  made_windows.column("document_id").to_pylist()))


def test_text_is_mixed_and_vectors_stay_unit_length_near_their_source() -> None:
    chunks, windows = _source(6, [2] * 6)
    pool = make_pool([chunks], [windows])
    made, made_windows = next(distractor_batches(pool, 200, dim=DIM, noise=0.35, batch=200))
    texts = made.column("text").to_pylist()
    # first half from one chunk, second half from another: two chunk numbers in most texts
    mixed = [t for t in texts if len({w.split("_")[0] for w in t.split()}) == 2]
    assert len(mixed) > 150
    assert made_windows.column("text").to_pylist() == made_windows.column("text_exact").to_pylist()
    vectors = made.column("vector").combine_chunks().flatten().to_numpy().reshape(-1, DIM)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    source = chunks.column("vector").combine_chunks().flatten().to_numpy().reshape(-1, DIM)
    best = (vectors @ source.T).max(axis=1)  # cosine to the nearest source vector
    assert 0.8 < float(np.median(best)) < 0.999


def test_a_distractor_is_its_own_file_not_a_second_version_of_its_source() -> None:
    import json

    from rag_system.retrieval.engine import mixed_versions
    from rag_system.retrieval.types import Candidate

    chunks, windows = _source(3, [1, 1, 1])
    chunks = chunks.append_column("metadata", pa.array([json.dumps({"source_path": "/docs/d.md", "pages": [1]})] * 3))
    made, _ = next(distractor_batches(make_pool([chunks], [windows]), 80, dim=DIM))
    metas = [json.loads(m) for m in made.column("metadata").to_pylist()]
    assert all(m["source_path"].startswith("/distractors/distractor-") and m["pages"] == [1] for m in metas)

    def candidate(row: dict) -> Candidate:  # type: ignore[type-arg]
        return Candidate(chunk_id=row["chunk_id"], document_id=row["document_id"], document_name=row["document_name"],
                         chunk_index=0, page_start=1, page_end=1, heading_path="", block_type="text", text=row["text"],
                         metadata=row["metadata"])

    real = [candidate(r) for r in chunks.to_pylist()]
    assert not mixed_versions(real + [candidate(r) for r in made.to_pylist()])
