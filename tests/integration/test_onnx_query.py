"""Questions on ONNX Runtime (rag_system/embedding/onnx_query.py): PyTorch's vectors, a cached export, fallbacks."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rag_system.embedding.minilm import MiniLMEmbedder
from rag_system.embedding.onnx_query import QUERY_MIN_COSINE, OnnxQueryEncoder

#: Real questions of the gold sets' kinds, one alone, a compound one, a keyword, one past 512 tokens.
QUESTIONS = [
    "What does the with statement do when an exception is raised inside the block?",
    "RFC 9220 bootstraps WebSockets over HTTP/3 with Extended CONNECT. Where was the pseudo-header it "
    "depends on first defined?",
    "asyncio.gather",
    "How is flow control credit returned? " * 80,
]


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[MiniLMEmbedder, MiniLMEmbedder]:
    """One embedder per runtime, the ONNX one exporting into a fresh cache folder."""
    cache = tmp_path_factory.mktemp("onnx")
    return MiniLMEmbedder(onnx_cache_dir=str(cache)), MiniLMEmbedder(query_runtime="torch")


def test_a_question_gets_the_vector_pytorch_computes(pair: tuple[MiniLMEmbedder, MiniLMEmbedder]) -> None:
    onnx, torch_ = pair
    for texts in ([q] for q in QUESTIONS):
        assert (onnx.embed_queries(texts) * torch_.embed_queries(texts)).sum(axis=1).min() >= QUERY_MIN_COSINE
    together = onnx.embed_queries(QUESTIONS)  # four lengths padded into one pass
    assert together.shape == (4, 384) and together.dtype == np.float32
    assert (together * torch_.embed_queries(QUESTIONS)).sum(axis=1).min() >= QUERY_MIN_COSINE
    assert isinstance(onnx._onnx, OnnxQueryEncoder)  # the vectors above came from ONNX Runtime
    assert torch_._onnx is False  # EMBEDDING_QUERY_RUNTIME=torch never builds a session


def test_batches_stay_on_pytorch(pair: tuple[MiniLMEmbedder, MiniLMEmbedder]) -> None:
    onnx, _ = pair
    texts = [f"passage number {i} about streams" for i in range(6)]
    assert np.allclose(onnx.embed(texts), onnx._torch_forward(texts), atol=1e-6)


def test_the_export_is_cached_and_reused(pair: tuple[MiniLMEmbedder, MiniLMEmbedder], tmp_path: Path) -> None:
    onnx, _ = pair
    onnx.embed_queries(["first question"])
    cached = list(Path(onnx._onnx_cache_dir).glob("*.onnx"))  # type: ignore[arg-type]
    assert len(cached) == 1 and cached[0].stat().st_size > 10_000_000
    before = cached[0].stat().st_mtime_ns
    again = MiniLMEmbedder(onnx_cache_dir=str(cached[0].parent))
    vector = again.embed_queries(["first question"])
    assert isinstance(again._onnx, OnnxQueryEncoder) and cached[0].stat().st_mtime_ns == before
    assert float((vector * onnx.embed_queries(["first question"])).sum()) >= QUERY_MIN_COSINE


def test_an_unwritable_cache_exports_in_memory(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder would be")
    embedder = MiniLMEmbedder(onnx_cache_dir=str(blocker / "onnx"))
    vector = embedder.embed_queries([QUESTIONS[0]])
    assert isinstance(embedder._onnx, OnnxQueryEncoder)
    assert float((vector * embedder._torch_forward([QUESTIONS[0]])).sum()) >= QUERY_MIN_COSINE


def test_an_encoder_whose_vectors_differ_is_refused(pair: tuple[MiniLMEmbedder, MiniLMEmbedder]) -> None:
    onnx, _ = pair
    onnx.embed_queries(["load it"])
    good = onnx._onnx
    assert onnx._checked(good) is good
    # The same real session fed another token table (what a mismatched export would compute).
    rng = np.random.default_rng(0)
    noisy = good._table + rng.normal(0, 0.05, good._table.shape).astype(np.float32)
    assert onnx._checked(OnnxQueryEncoder(good._session, noisy, good._inputs)) is None
