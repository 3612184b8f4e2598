"""bge-small-en-v1.5 on ONNX Runtime over the real model files (`make setup` fetches them), real LanceDB.

What is checked: the question instruction and CLS pooling, int8 and fp32 as two
identities, chunk budgets in the same tokens as MiniLM's, no PyTorch on the
query path, and the identity guard between MiniLM and bge indexes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from rag_system.indexing.builder import build_index
from rag_system.embedding.registry import EMBEDDERS, embedder_named, english_default
from rag_system.embedding.model_files import BGE_FP32, BGE_INT8, installed, models_root
from rag_system.embedding.bge import BGE_QUERY_PREFIX
from rag_system.indexing.store import ChunkTable, EmbedderMismatchError, open_store
from rag_system.retrieval.engine import RetrievalEngine
from testkit import REPO_ROOT

pytestmark = pytest.mark.skipif(
    not (installed(BGE_INT8, models_root()) and installed(BGE_FP32, models_root())),
    reason="the bge-small model files are not fetched: run `make setup`")

DOCS = {
    "leave.txt": "Annual leave\n\nEmployees accrue 25 days of paid annual leave per calendar year. Unused days "
                 "may be carried over until the end of March.",
    "boiler.txt": "Steam boiler\n\nThe boiler's overpressure valve opens at 12 bar. Check its calibration every "
                  "six months and log the result.",
    "fruit.txt": "Fruit\n\nBananas are a good source of potassium and fibre.",
}


def _write(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in DOCS.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def bge(tmp_path_factory):  # type: ignore[no-untyped-def]
    from rag_system.config import load_settings

    settings = load_settings(environ={"DOCENT_DATA_DIR": str(tmp_path_factory.mktemp("bge"))}, dotenv_path=None)
    return embedder_named(settings, "bge-small")


def test_questions_carry_the_instruction_and_passages_do_not(bge) -> None:  # type: ignore[no-untyped-def]
    question = "How many days of annual leave do employees get?"
    asked = bge.embed_queries([question])[0]
    assert np.allclose(asked, bge.embed([BGE_QUERY_PREFIX + question])[0], atol=1e-6)
    assert not np.allclose(asked, bge.embed([question])[0], atol=1e-3)
    passages = bge.embed(list(DOCS.values()))
    assert np.allclose(np.linalg.norm(passages, axis=1), 1.0, atol=1e-5)
    scores = passages @ asked
    assert int(np.argmax(scores)) == 0 and scores[0] - scores[2] > 0.1


def test_batches_and_questions_give_the_same_vectors(bge) -> None:  # type: ignore[no-untyped-def]
    texts = [f"Paragraph {i}: " + " ".join(["the boiler valve"] * (i + 1)) for i in range(9)]
    batched = bge.embed(texts, on_batch=lambda _: None, batch_size=4)  # padded batches, 2 threads
    alone = np.stack([bge.embed([t])[0] for t in texts])  # one text at a time, one thread, unpadded
    assert float((batched * alone).sum(axis=1).min()) > 0.9999


def test_int8_and_fp32_agree_but_are_two_identities(tmp_path: Path, bge) -> None:  # type: ignore[no-untyped-def]
    from rag_system.config import load_settings

    settings = load_settings(environ={"DOCENT_DATA_DIR": str(tmp_path)}, dotenv_path=None)
    fp32 = embedder_named(settings, "bge-small-fp32")
    texts = list(DOCS.values())
    assert float((bge.embed(texts) * fp32.embed(texts)).sum(axis=1).min()) > 0.99
    assert bge.identity.model_id != fp32.identity.model_id
    assert {EMBEDDERS["bge-small"].model_id, EMBEDDERS["bge-small-fp32"].model_id} == \
        {bge.identity.model_id, fp32.identity.model_id}


def test_chunk_budgets_are_counted_in_minilm_tokens(bge, embedder) -> None:  # type: ignore[no-untyped-def]
    # Both use BERT's uncased WordPiece vocabulary, so a chunk cut for one fits the other (and reembed
    # can keep an index's chunks).
    texts = [*DOCS.values(), "RFC 9220 bootstraps WebSockets over HTTP/3 with Extended CONNECT.", "naïve café"]
    assert bge.count_tokens_batch(texts) == embedder.count_tokens_batch(texts)
    assert bge.max_content_tokens == embedder.max_content_tokens == 510


def test_identity_guard_keeps_minilm_and_bge_indexes_apart(tmp_path: Path, settings, embedder, bge) -> None:  # type: ignore[no-untyped-def]
    docs = _write(tmp_path / "docs")
    build_index([docs], "old-minilm", settings, embedder=embedder)
    build_index([docs], "new-bge", settings, embedder_name="bge-small")
    db = open_store(settings)
    assert ChunkTable.open(db, "new-bge").recorded_identity() == (EMBEDDERS["bge-small"].model_id, 384)
    # Writing bge vectors into the MiniLM index (or the reverse) is refused, nothing is written.
    before = ChunkTable.open(db, "old-minilm").count()
    (docs / "extra.txt").write_text("Extra\n\nA new file about the boiler's pressure gauge.", encoding="utf-8")
    with pytest.raises(EmbedderMismatchError, match="keeps the embedder"):
        build_index([docs], "old-minilm", settings, embedder_name="bge-small")
    with pytest.raises(EmbedderMismatchError):
        ChunkTable.open(db, "old-minilm", bge.identity)
    assert ChunkTable.open(open_store(settings), "old-minilm").count() == before
    # One engine whose own embedder is bge serves both: each index is queried with its own model.
    engine = RetrievalEngine(settings, bge)
    assert engine.embedder_for(engine.table("old-minilm")).name == "minilm"
    assert engine.embedder_for(engine.table("new-bge")).name == "bge-small"
    for index in ("old-minilm", "new-bge"):
        hits = engine.retrieve(index, "At what pressure does the boiler valve open?",
                               engine.options(k=3, mode="vector_only"))
        assert hits.candidates[0].document_name == "boiler.txt"


def test_auto_builds_english_with_the_measured_default(tmp_path: Path, settings) -> None:  # type: ignore[no-untyped-def]
    auto = settings.with_overrides(embedder="auto")
    build_index([_write(tmp_path / "en")], "auto-en", auto)
    wanted = EMBEDDERS[english_default(auto)].model_id
    assert ChunkTable.open(open_store(settings), "auto-en").recorded_identity()[0] == wanted


def test_a_bge_question_needs_no_pytorch(tmp_path: Path) -> None:
    code = (
        "import json, sys\n"
        "from rag_system.config import load_settings\n"
        "from rag_system.embedding.registry import embedder_named\n"
        f"s = load_settings(environ={{'DOCENT_DATA_DIR': {str(tmp_path)!r}}}, dotenv_path=None)\n"
        "vector = embedder_named(s, 'bge-small').embed_queries(['where is the boiler valve?'])[0]\n"
        "print(json.dumps({'torch': 'torch' in sys.modules, 'dim': len(vector)}))\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, check=True,
                         env={"PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1", "HOME": str(Path.home())})
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {"torch": False, "dim": 384}
