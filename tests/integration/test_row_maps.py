"""Row-address maps (rag_system/retrieval/chunk_runs.py, row_maps.py) on real LanceDB tables.

A map may lack rows (the legs then read their ids) but must never name the
wrong chunk: these tests check it against the table itself, across appends,
deletes, compaction and a table made anew under the same name.
"""

from __future__ import annotations

import uuid
from dataclasses import replace
from pathlib import Path

import lancedb
import numpy as np
import pyarrow as pa
import pytest

from rag_system.indexing.builder import build_index
from rag_system.indexing.store import ChunkTable, connect
from rag_system.indexing.windows import EXACT_COLUMN, TEXT_COLUMN
from rag_system.retrieval import legs
from rag_system.retrieval.chunk_runs import ChunkRuns, scan
from rag_system.retrieval.first_stage import ANN_REFINE_FACTOR
from rag_system.retrieval.fts_query import sanitize_fts_query
from rag_system.retrieval.row_maps import RowMaps, identify
from tests.integration.test_index_build import write_corpus


def _windows(chunks: list[str], per_chunk: int) -> pa.Table:
    ids = [c for c in chunks for _ in range(per_chunk)]
    return pa.table({"chunk_id": ids, "n": list(range(len(ids)))})


def _truth(table: lancedb.table.Table) -> dict[int, str]:
    rows = table.search().select(["chunk_id"]).with_row_id(True).to_arrow()
    return dict(zip(rows.column("_rowid").to_pylist(), rows.column("chunk_id").to_pylist()))


def _scan(table: lancedb.table.Table) -> ChunkRuns:
    return legs.run([scan(legs.handle(table))])[0]


def _sample_read(table: lancedb.table.Table, runs: ChunkRuns) -> pa.Table:
    return table.take_row_ids(runs.sample().tolist()).select(["chunk_id"]).with_row_id().to_arrow()


@pytest.mark.parametrize("hexadecimal", [True, False])
def test_a_map_names_every_row_and_nothing_else(tmp_path: Path, hexadecimal: bool) -> None:
    db = lancedb.connect(tmp_path)
    make = (lambda: uuid.uuid4().hex) if hexadecimal else (lambda: f"doc:{uuid.uuid4()}")
    table = db.create_table("w", _windows([make() for _ in range(40)], 3))
    table.add(_windows([make() for _ in range(25)], 2))  # a second fragment
    table.delete("n % 7 = 0")  # hidden rows inside runs
    runs, truth = _scan(table), _truth(table)
    assert pa.types.is_fixed_size_binary(runs.ids.type) == hexadecimal
    ids, missed = runs.lookup(np.array(list(truth), dtype=np.uint64))
    assert not missed.any() and ids.to_pylist() == list(truth.values())
    hidden = [(0 << 32) + 0, (0 << 32) + 7, (1 << 32) + 0]  # deleted rows of both fragments
    unknown = [(9 << 32) + 1, (0 << 32) + 10_000]
    ids, missed = runs.lookup(np.array(hidden + unknown, dtype=np.uint64))
    assert missed.all() and ids.null_count == len(hidden + unknown)


def test_the_sample_check_follows_the_tables_history(tmp_path: Path) -> None:
    db = lancedb.connect(tmp_path)
    table = db.create_table("w", _windows([uuid.uuid4().hex for _ in range(30)], 2))
    table.add(_windows([uuid.uuid4().hex for _ in range(30)], 2))
    runs = _scan(table)
    assert runs.agrees(_sample_read(table, runs))
    table.add(_windows([uuid.uuid4().hex for _ in range(5)], 2))  # appends keep every address
    table.delete("n < 4")
    assert runs.agrees(_sample_read(table, runs))
    table.optimize()  # compaction moves every row to new fragments
    assert not runs.agrees(_sample_read(table, runs))
    db.drop_table("w")  # the same name made anew: the same addresses, other chunks
    remade = db.create_table("w", _windows([uuid.uuid4().hex for _ in range(30)], 2))
    remade.add(_windows([uuid.uuid4().hex for _ in range(30)], 2))
    assert not runs.agrees(_sample_read(remade, runs))
    assert _scan(remade).agrees(_sample_read(remade, _scan(remade)))


def test_a_map_of_an_empty_table_gives_way_to_its_rows(tmp_path: Path) -> None:
    table = lancedb.connect(tmp_path).create_table("w", schema=_windows(["x"], 1).schema)
    runs, maps = _scan(table), RowMaps()
    assert len(runs.starts) == 0
    handle = legs.handle(table)
    maps.hold(handle.name, runs, runs.version)
    table.add(_windows([uuid.uuid4().hex for _ in range(4)], 2))
    truth = _truth(table)
    hits = pa.table({"_score": np.ones(len(truth), np.float32), "_rowid": pa.array(list(truth), pa.uint64())})
    [named] = legs.run([identify(maps, handle, runs, hits)])
    assert named.column("chunk_id").to_pylist() == list(truth.values())
    assert maps.current(handle.name) is not runs  # dropped at the new version, made again


@pytest.fixture()
def index(tmp_path: Path, embedder) -> tuple[ChunkTable, object, Path]:  # type: ignore[no-untyped-def]
    from rag_system.config import load_settings

    write_corpus(tmp_path / "docs", 3, sentences=30)
    settings = load_settings(environ={"DOCENT_DATA_DIR": str(tmp_path / "data")}, dotenv_path=None)
    settings = settings.with_overrides(chunk_tokens=200, chunk_window_tokens=64)
    build_index([tmp_path / "docs"], "maps", settings, embedder=embedder)
    # Every read checks for newer versions, as the RAG API's handles do: a build's rows are seen at once.
    db = connect(settings.resolved_lancedb_uri, read_consistency_s=0)
    return ChunkTable.open(db, "maps"), settings, tmp_path / "docs"


def _rankings(table: ChunkTable, embedder, question: str, maps: RowMaps | None) -> list[legs.Ranking]:  # type: ignore[no-untyped-def]
    terms = sanitize_fts_query(question)
    vector = embedder.embed_queries([question])[0]
    found = legs.run([legs.fts_leg(table, terms, None, 8, TEXT_COLUMN, maps),
                      legs.fts_leg(table, terms, None, 8, EXACT_COLUMN, maps),
                      legs.vector_leg(table, vector, None, 8, ANN_REFINE_FACTOR, maps)])
    assert all(isinstance(r, legs.Ranking) and r.ids for r in found), found
    return found


def _maps_of(table: ChunkTable) -> list[str]:
    assert table.windows is not None and table.vectors is not None
    return [legs.handle(table.windows.table).name, legs.handle(table.vectors.table).name]


def test_legs_rank_the_same_with_a_map(index, embedder) -> None:  # type: ignore[no-untyped-def]
    table, _, _ = index
    maps = RowMaps()
    question = "Which topic has value 105?"
    plain = _rankings(table, embedder, question, None)
    assert _rankings(table, embedder, question, maps) == plain  # no map yet: ids read as before
    maps.wait()
    assert all(maps.current(name) is not None for name in _maps_of(table))
    assert _rankings(table, embedder, question, maps) == plain
    sides = (table.windows.table, table.vectors.table)  # type: ignore[union-attr]
    assert all(maps.checked(name, maps.current(name), side.version)  # type: ignore[arg-type]
               for name, side in zip(_maps_of(table), sides))  # checked at the version the legs read


def test_rows_written_after_the_map_are_found(index, embedder) -> None:  # type: ignore[no-untyped-def]
    table, settings, docs = index
    maps = RowMaps()
    _rankings(table, embedder, "Which topic has value 105?", maps)
    maps.wait()
    (docs / "doc009.txt").write_text("Zanzibar cloves are graded by the spice board of topic9 at value 909.")
    build_index([docs], "maps", settings, embedder=embedder)
    question = "How are Zanzibar cloves graded?"
    with_maps = _rankings(table, embedder, question, maps)
    assert with_maps == _rankings(table, embedder, question, None)
    new_ids = {r["chunk_id"] for r in table.table.search().where("document_name = 'doc009.txt'")
               .select(["chunk_id"]).to_list()}
    assert new_ids & set(with_maps[0].ids) and new_ids & set(with_maps[2].ids)


def test_hits_the_map_lacks_are_read_from_the_table(tmp_path: Path) -> None:
    table = lancedb.connect(tmp_path).create_table("w", _windows([uuid.uuid4().hex for _ in range(20)], 3))
    runs, maps = _scan(table), RowMaps()
    handle = legs.handle(table)
    maps.hold(handle.name, runs, runs.version)
    table.add(_windows([uuid.uuid4().hex for _ in range(5)], 3))
    gone = max(_truth(table))
    table.delete(f"_rowid = {gone}")
    truth = _truth(table)
    asked = [*truth, gone]  # every row, the new ones included, and a new one deleted since the search
    hits = pa.table({"_score": np.arange(len(asked), dtype=np.float32),
                     "_rowid": pa.array(asked, pa.uint64())})
    [named] = legs.run([identify(maps, handle, maps.current(handle.name), hits)])  # type: ignore[arg-type]
    assert named.column("chunk_id").to_pylist() == list(truth.values())
    assert named.column("_score").to_pylist() == list(range(len(truth)))
    nothing = hits.slice(0, 0)
    [empty] = legs.run([identify(maps, handle, maps.current(handle.name), nothing)])  # type: ignore[arg-type]
    assert empty.num_rows == 0 and empty.column_names == ["_score", "chunk_id"]


def test_a_map_of_other_rows_is_caught_and_dropped(index, embedder) -> None:  # type: ignore[no-untyped-def]
    table, _, _ = index
    maps = RowMaps()
    wrong = {}
    for name, side in zip(_maps_of(table), (table.windows.table, table.vectors.table)):  # type: ignore[union-attr]
        runs = _scan(side)  # the same addresses naming other chunks: the table as if made anew
        others = pa.array([uuid.uuid4().hex for _ in range(len(runs.starts))])
        wrong[name] = replace(runs, ids=others)
        maps.hold(name, wrong[name], None)
    question = "paragraph 2 of document 0"
    assert _rankings(table, embedder, question, maps) == _rankings(table, embedder, question, None)
    maps.wait()
    assert all(maps.current(name) is not wrong[name] for name in wrong)
