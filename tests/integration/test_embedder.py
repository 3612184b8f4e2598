"""The packaged embedder: offline load, normalised vectors, token counts, precision."""

from __future__ import annotations

import numpy as np
import pytest

from rag_system.embedding.minilm import MiniLMEmbedder, resolve_precision
from rag_system.embedding.base import EmbedderLoadError


def test_vectors_are_unit_length_in_input_order(embedder: MiniLMEmbedder) -> None:
    texts = ["short", "a much longer sentence about QUIC flow control and streams", "short"]
    vectors = embedder.embed(texts)
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    assert np.allclose(vectors[0], vectors[2], atol=1e-4)
    assert float(vectors[0] @ vectors[1]) < 0.9
    assert embedder.embed([]).shape == (0, 384)


def test_similar_texts_are_closer(embedder: MiniLMEmbedder) -> None:
    a, b, c = embedder.embed(["The cat sat on the mat.", "A cat is sitting on a rug.",
                              "Quarterly revenue grew by eight percent."])
    assert float(a @ b) > float(a @ c) + 0.2


def test_token_counts_use_the_model_tokenizer(embedder: MiniLMEmbedder) -> None:
    assert embedder.count_tokens_batch(["hello world", ""]) == [2, 0]
    assert embedder.count_tokens("unbelievably") > 1  # wordpieces, not words
    assert embedder.max_content_tokens == 510


def test_token_counts_are_untruncated_after_an_embedding_truncated_its_batch(embedder: MiniLMEmbedder) -> None:
    """Counts come from the Rust tokenizer directly, which the embedding passes leave set to truncate."""
    long = "token " * 900
    embedder.embed([long] * 6)  # a batch: truncation to 512 and padding set on the tokenizer
    texts = [long, "Ünïcödé — émojis 🙂\tand tabs", "hello world", ""]
    wrapper = embedder._tokenizer(texts, add_special_tokens=False, truncation=False, verbose=False)
    assert embedder.count_tokens_batch(texts) == [len(ids) for ids in wrapper["input_ids"]]
    assert embedder.count_tokens_batch([long]) == [900]
    assert embedder.embed([long] * 6).shape == (6, embedder.dimension)  # and embedding truncates again


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_precisions_agree(embedder: MiniLMEmbedder, precision: str) -> None:
    other = MiniLMEmbedder(precision=precision)
    texts = ["Reciprocal rank fusion merges ranked lists.", "Tables stay whole in a chunk."]
    assert other.precision == precision
    cos = (other.embed(texts) * embedder.embed(texts)).sum(axis=1)
    assert float(cos.min()) > 0.999


def test_auto_precision_resolves_to_a_concrete_one() -> None:
    import torch

    assert resolve_precision("auto", torch) in {"fp32", "bf16"}
    assert resolve_precision("fp32", torch) == "fp32"


def test_missing_model_directory_names_the_setting(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(EmbedderLoadError, match="EMBEDDING_MODEL"):
        MiniLMEmbedder(model_setting=str(tmp_path / "nope"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(EmbedderLoadError, match="cannot load"):
        MiniLMEmbedder(model_setting=str(tmp_path / "empty"))


def test_a_remembered_question_gets_the_vector_a_fresh_call_computes(embedder: MiniLMEmbedder) -> None:
    question, other = "How does QUIC recover from packet loss?", "What is a stream identifier?"
    first = embedder.embed_queries([question])
    first[0, 0] = 99.0  # a caller's changes never reach the remembered vector
    again = embedder.embed_queries([question])
    assert again[0, 0] != 99.0
    pair = embedder.embed([other, question])  # one remembered, one new, in the caller's order
    embedder.forget_recent()
    fresh = np.stack([embedder.embed([other])[0], embedder.embed([question])[0]])
    assert np.allclose(pair, fresh, atol=1e-6) and np.allclose(again[0], fresh[1], atol=1e-6)
    assert embedder.embed([question, question]).shape == (2, 384)


def test_passes_from_many_threads_run_on_one_and_return_each_callers_vectors(embedder: MiniLMEmbedder) -> None:
    import threading
    from concurrent.futures import ThreadPoolExecutor

    batches = [[f"question {i} about topic {j}" for j in range(6)] for i in range(8)]
    alone = [embedder.embed(b) for b in batches]
    seen: set[str] = set()
    forward = embedder._torch_forward  # a batch's pass (batches never take the question path)

    def spy(texts: list[str]) -> np.ndarray:
        seen.add(threading.current_thread().name)
        return forward(texts)

    embedder._torch_forward = spy  # type: ignore[method-assign]
    try:
        with ThreadPoolExecutor(max_workers=8) as pool:
            together = list(pool.map(embedder.embed, batches))
    finally:
        del embedder._torch_forward
    assert len(seen) == 1 and next(iter(seen)).startswith("docent-embed")
    for a, b in zip(alone, together):
        assert np.allclose(a, b, atol=1e-5)


def test_a_question_is_embedded_on_one_intra_op_thread_and_a_batch_on_all() -> None:
    import torch

    embedder = MiniLMEmbedder(query_runtime="torch")  # on ONNX Runtime (the default) a question never touches torch

    configured = embedder._threads
    embedder.embed([f"a passage of text number {i}" for i in range(8)])
    assert embedder._worker.submit(torch.get_num_threads).result() == configured
    embedder.forget_recent()
    embedder.embed_queries(["how many threads embed a question?"])
    assert embedder._worker.submit(torch.get_num_threads).result() == 1
    embedder.embed([f"another passage, number {i}" for i in range(8)])
    assert embedder._worker.submit(torch.get_num_threads).result() == configured


def test_a_long_calls_last_few_texts_stay_on_pytorch() -> None:
    """A build's group ends with a batch of a few texts: ONNX Runtime (for questions) is never loaded for it."""
    embedder = MiniLMEmbedder()  # query_runtime onnx, the default
    vectors = embedder.embed([f"passage {i} of a build's group" for i in range(17)], batch_size=16)  # 16 + 1
    assert vectors.shape == (17, embedder.dimension)
    assert embedder._onnx is None  # never asked for: not loaded, not exported
