"""`reembed`: an index moves from MiniLM to bge-small without its files, crash-safe and resumable.

Real models (MiniLM, bge-small's model files), real LanceDB. The re-embedded
index must equal a fresh build with bge, vector for vector, and every state
an interrupted run leaves must be a valid index.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from rag_system.indexing.builder import build_index
from rag_system.embedding.registry import EMBEDDERS, embedder_named
from rag_system.indexing.manifest import Manifest
from rag_system.embedding.model_files import BGE_INT8, installed, models_root
from rag_system.indexing.reembed import _switch_rows, _staging, reembed_index, staging_name
from rag_system.indexing.store import ChunkTable, open_store, table_exists, table_name
from rag_system.indexing.window_vectors import VECTORS_SUFFIX
from rag_system.retrieval.engine import RetrievalEngine
from testkit import REPO_ROOT

pytestmark = pytest.mark.skipif(not installed(BGE_INT8, models_root()),
                                reason="the bge-small model files are not fetched: run `make setup`")

TOPICS = [
    "The steam boiler must be drained every winter. Its overpressure valve opens at twelve bar and the gauge "
    "shows the pressure in the drum.",
    "Annual leave accrues at twenty five days per calendar year. Unused days may be carried over until March, "
    "after which they lapse.",
    "Bananas are rich in potassium and fibre. They ripen faster in a paper bag next to apples, which release "
    "ethylene gas.",
    "The QUIC transport protocol multiplexes streams over UDP. Each stream has its own flow control window.",
    "Mount Everest is the highest mountain above sea level. Climbers acclimatise at base camp before the ascent.",
    "Python list comprehensions build lists from iterables. A generator expression produces items lazily.",
]
BGE = EMBEDDERS["bge-small"].model_id
MINILM = EMBEDDERS["minilm"].model_id


def _corpus(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(4):  # documents of several windows each, some of them vector-only (topic windows)
        order = TOPICS[i:] + TOPICS[:i]
        (folder / f"notes{i}.txt").write_text(f"Notes {i}\n\n" + "\n\n".join(order), encoding="utf-8")
    (folder / "short.txt").write_text("Short\n\nThe boiler's gauge is read daily.", encoding="utf-8")
    return folder


def _windows_by_chunk(settings, index: str) -> dict[str, np.ndarray]:  # type: ignore[no-untyped-def]
    rows = ChunkTable.open(open_store(settings), index).table.to_arrow().select(["chunk_id", "vectors"]).to_pylist()
    return {r["chunk_id"]: np.asarray(r["vectors"], dtype=np.float32) for r in rows}


def test_reembed_is_interrupted_resumed_and_equals_a_fresh_build(tmp_path: Path, settings, embedder) -> None:  # type: ignore[no-untyped-def]
    docs = _corpus(tmp_path / "docs")
    build_index([docs], "notes", settings, embedder=embedder)
    bge = embedder_named(settings, "bge-small")
    db = open_store(settings)

    # Interrupted after 2 of 5 documents: the index is untouched, still MiniLM, and answers with MiniLM.
    first = reembed_index("notes", settings, bge, stop_after=2)
    assert (first.documents, first.switched) == (2, False)
    assert ChunkTable.open(db, "notes").recorded_identity()[0] == MINILM
    assert table_exists(db, staging_name("notes")) and table_exists(db, table_name("notes") + VECTORS_SUFFIX)
    engine = RetrievalEngine(settings, embedder)
    assert engine.retrieve("notes", "When does the boiler valve open?", engine.options(k=3)).candidates

    # Resumed: the staged documents are kept, the rest embedded, the index switched, with progress as a build.
    events: list = []
    second = reembed_index("notes", settings, bge, on_event=events.append)
    assert (second.documents_kept, second.documents, second.switched) == (2, 3, True)
    assert second.windows_not_recorded == 0  # vector-only windows were rebuilt from their recorded spans
    assert [e.type for e in events][0] == "build_started" and events[-1].type == "build_done"
    assert [e for e in events if e.type == "file_written"][-1].data["progress"]["fraction"] > 0.9
    table = ChunkTable.open(open_store(settings), "notes")
    assert table.recorded_identity() == (BGE, 384)
    assert table.vectors is not None and table.vectors.table.count_rows() == sum(
        len(v) for v in _windows_by_chunk(settings, "notes").values())
    assert not table_exists(db, staging_name("notes"))
    records = Manifest.open_existing(db, "notes").records()  # type: ignore[union-attr]
    assert {r.embedding_model for r in records.values()} == {BGE}

    # The same vectors as a fresh build with bge, window for window (same chunks: same vocabulary).
    build_index([docs], "fresh", settings, embedder=bge)
    again, fresh = _windows_by_chunk(settings, "notes"), _windows_by_chunk(settings, "fresh")
    assert again.keys() == fresh.keys() and any(len(v) > 2 for v in fresh.values())
    for chunk_id, vectors in fresh.items():
        assert again[chunk_id].shape == vectors.shape
        assert float((again[chunk_id] * vectors).sum(axis=1).min()) > 0.9999

    # The next build has nothing to do, and questions go to bge.
    assert build_index([docs], "notes", settings).unchanged == 5
    engine = RetrievalEngine(settings, embedder)
    assert engine.embedder_for(engine.table("notes")).name == "bge-small"
    hits = engine.retrieve("notes", "How many days of annual leave are there?", engine.options(k=3))
    assert hits.candidates and "twenty five days" in hits.candidates[0].text


def test_a_run_that_died_during_the_switch_is_finished_by_the_next(tmp_path: Path, settings, embedder) -> None:  # type: ignore[no-untyped-def]
    docs = _corpus(tmp_path / "docs")
    build_index([docs], "notes", settings, embedder=embedder)
    bge = embedder_named(settings, "bge-small")
    reembed_index("notes", settings, bge, stop_after=5)  # every document staged, not switched
    db = open_store(settings)
    source = ChunkTable.open(db, "notes")
    _switch_rows(db, "notes", _staging(db, "notes", source, bge))  # ... and the process dies here
    half = ChunkTable.open(open_store(settings), "notes")
    assert half.recorded_identity()[0] == BGE and half.vectors is None  # consistent: searched by its own vectors
    engine = RetrievalEngine(settings, embedder)
    assert engine.retrieve("notes", "highest mountain", engine.options(k=2, mode="vector_only")).candidates
    done = reembed_index("notes", settings, bge)
    assert done.switched and done.documents == 0
    final = ChunkTable.open(open_store(settings), "notes")
    assert final.vectors is not None and not table_exists(db, staging_name("notes"))


def test_cli_reembeds_and_refuses_unknown_embedders(tmp_path: Path) -> None:
    docs = _corpus(tmp_path / "docs")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(Path.home()), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "DOCENT_DATA_DIR": str(tmp_path / "data"), "RAG_API_PORT": "1"}  # no RAG API on port 1

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "rag_system", *args], cwd=REPO_ROOT, env=env,
                              capture_output=True, text=True, timeout=600)

    assert cli("index", str(docs), "--index", "notes", "--embedder", "minilm", "--local").returncode == 0
    bad = cli("reembed", "--index", "notes", "--embedder", "bert")
    assert bad.returncode == 2 and "unknown embedder" in bad.stderr
    missing = cli("reembed", "--index", "nothing", "--embedder", "bge-small")
    assert missing.returncode == 2 and "does not exist" in missing.stderr
    done = cli("reembed", "--index", "notes", "--embedder", "bge-small", "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert (summary["previous_model"], summary["model"], summary["documents"]) == (MINILM, BGE, 5)
    assert "files" in done.stderr  # the build's progress lines
    again = cli("reembed", "--index", "notes", "--embedder", "bge-small")
    assert again.returncode == 0 and "already uses" in again.stdout
