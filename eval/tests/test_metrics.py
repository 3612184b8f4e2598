"""The harness's metrics follow eval-data/localgpt/README.md exactly."""

from __future__ import annotations

import math

import pytest

from eval.metrics import GoldRow, mrr_at, ndcg_at, normalise, recall_at, relevance, row_metrics


def test_normalisation_collapses_whitespace_and_case_as_configured() -> None:
    assert normalise("  A\n\tb  C ", case_sensitive=False) == "a b c"
    assert normalise("  A\n\tb  C ", case_sensitive=True) == "A b C"


def test_any_and_all_recall() -> None:
    row_any = GoldRow("x", "q", ("red fox", "blue jay"), "any")
    row_all = GoldRow("y", "q", ("red fox", "blue jay"), "all")
    texts = ["nothing here", "a RED\nfox ran", "a blue  jay sang"]
    hits = relevance(texts, row_any, case_sensitive=False)
    assert recall_at(hits, 1, "any") == 0.0 and recall_at(hits, 2, "any") == 1.0
    assert recall_at(hits, 2, "all") == 0.0 and recall_at(hits, 3, "all") == 1.0
    assert row_metrics(texts, row_all, case_sensitive=False)["recall@5"] == 1.0
    assert relevance(texts, row_any, case_sensitive=True)[1] == [False, False]


def test_mrr_and_ndcg_use_the_retrieved_list_as_ideal() -> None:
    hits = [[False], [True], [False], [True]]
    assert mrr_at(hits, 10) == 0.5
    dcg = 1 / math.log2(3) + 1 / math.log2(5)
    idcg = 1 + 1 / math.log2(3)
    assert ndcg_at(hits, 10) == pytest.approx(dcg / idcg)
    assert ndcg_at([[False]] * 5, 10) == 0.0
    assert ndcg_at([[True]], 10) == 1.0
