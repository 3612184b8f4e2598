"""The ms-marco-MiniLM-L-12-v2 cross-encoder over the real int8 model file (`make setup` fetches it).

Checked: the pair's token types, a relevant passage over an irrelevant one,
windows instead of whole chunks, the reranker slot (threshold selection, the
first stage's top `rerank_depth` only) through the real retrieval engine.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from rag_system.indexing.builder import build_index
from rag_system.embedding.model_files import RERANKER_INT8, installed, models_root
from rag_system.embedding.bge import single
from rag_system.retrieval.cross_encoder import MAX_WINDOWS, PACKAGED_NAME, WINDOW_TOKENS, packaged_cross_encoder
from rag_system.retrieval.engine import RetrievalEngine
from rag_system.retrieval.rerank import forget_rerankers, load_reranker
from rag_system.retrieval.reranker_types import KIND_CROSS_ENCODER

pytestmark = pytest.mark.skipif(not installed(RERANKER_INT8, models_root()),
                                reason="the cross-encoder's model files are not fetched: run `make setup`")

QUESTION = "What is the capital of Japan?"
RELEVANT = "Tokyo is the capital and the most populous city of Japan."
IRRELEVANT = "Bananas are an excellent source of potassium and fibre."


@pytest.fixture(scope="module")
def encoder():  # type: ignore[no-untyped-def]
    return packaged_cross_encoder()


def test_the_pair_marks_the_passage_as_the_second_segment(encoder) -> None:  # type: ignore[no-untyped-def]
    encoding = encoder._pairs.encode(QUESTION, RELEVANT)
    tokens, types = encoding.tokens, encoding.type_ids
    first_sep = tokens.index("[SEP]")
    assert tokens[0] == "[CLS]" and tokens[-1] == "[SEP]"
    assert set(types[:first_sep + 1]) == {0} and set(types[first_sep + 1:]) == {1}
    assert encoding.attention_mask == [1] * len(tokens)  # not padded to the file's 512
    # The model reads those types: zeroed, the relevant pair scores far lower.
    feed = single(encoding, encoder._inputs)
    zeroed = {**feed, "token_type_ids": np.zeros_like(feed["token_type_ids"])}
    with_types = float(encoder._session.run(None, feed)[0][0][0])
    without = float(encoder._session.run(None, zeroed)[0][0][0])
    assert with_types == pytest.approx(encoder.logit(QUESTION, RELEVANT))
    assert with_types > 0 and with_types - without > 1.0


def test_a_relevant_passage_outscores_an_irrelevant_one(encoder) -> None:  # type: ignore[no-untyped-def]
    relevant, irrelevant = encoder.score(QUESTION, [RELEVANT, IRRELEVANT])
    assert relevant > 0.5 > irrelevant
    assert encoder.logit(QUESTION, RELEVANT) > 0 > encoder.logit(QUESTION, IRRELEVANT)


def test_a_chunk_is_read_as_windows_and_scores_as_its_best(encoder) -> None:  # type: ignore[no-untyped-def]
    filler = "\n".join(f"Section {i} describes the warranty terms of printer model X{i} in detail." for i in range(40))
    chunk = filler + "\n" + RELEVANT
    windows = encoder.windows(chunk, "atlas.pdf > Facts")
    assert 1 < len(windows) <= MAX_WINDOWS
    assert all(w.startswith("atlas.pdf > Facts\n") for w in windows)
    bodies = [w.removeprefix("atlas.pdf > Facts\n") for w in windows]
    assert all(len(encoder._tokenizer.encode(b, add_special_tokens=False).ids) <= WINDOW_TOKENS for b in bodies)
    # A chunk scores as its best window; past MAX_WINDOWS windows nothing is read (chunks hold ~4).
    best = max(encoder.score(QUESTION, [w])[0] for w in windows)
    assert encoder.score(QUESTION, [chunk], ["atlas.pdf > Facts"])[0] == pytest.approx(best)
    assert best < 0.5
    assert encoder.score(QUESTION, [RELEVANT + "\n" + filler], ["atlas.pdf > Facts"])[0] > 0.5


def test_the_engine_reranks_the_first_stage_top_with_the_packaged_model(tmp_path: Path, settings, embedder) -> None:  # type: ignore[no-untyped-def]
    docs = tmp_path / "docs"
    docs.mkdir()
    facts = {"japan.txt": f"Japan\n\n{RELEVANT}", "fruit.txt": f"Fruit\n\n{IRRELEVANT}",
             "rivers.txt": "Rivers\n\nThe Shinano is the longest river in Japan.",
             "kyoto.txt": "Kyoto\n\nKyoto was the imperial capital of Japan for more than a thousand years."}
    for name, text in facts.items():
        (docs / name).write_text(text, encoding="utf-8")
    build_index([docs], "facts", settings, embedder=embedder)
    forget_rerankers()
    reranker, status = load_reranker(PACKAGED_NAME)
    assert status.loaded and status.kind == KIND_CROSS_ENCODER and reranker is not None
    engine = RetrievalEngine(settings.with_overrides(reranker_model=PACKAGED_NAME), embedder)
    result = engine.retrieve("facts", "Which city is Japan's capital today?",
                             engine.options(k=4, rerank=True, rerank_depth=3, min_score=0.5, min_keep=1, top_k=2))
    assert result.final is not None and result.final[0].document_name == "japan.txt"
    scored = [r for r in result.reranked if not math.isnan(r.score)]
    assert len(scored) == 3 and len(result.reranked) == 4  # only the first stage's top 3 were read
    assert math.isnan(result.reranked[-1].score) and not result.reranked[-1].kept
    assert "rerank_ms" in result.timings_ms
