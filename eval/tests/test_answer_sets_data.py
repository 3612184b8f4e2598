"""Every answer-set row re-checked against the shared corpora, and the checker failing rows the corpus contradicts."""

from __future__ import annotations

from dataclasses import replace

import pytest

from eval.answer_sets import SETS, load_sets
from eval.answer_sets.check import check_sets, main
from eval.tests import EVAL_DATA

needs_data = pytest.mark.skipif(not (EVAL_DATA / "localgpt").is_dir(), reason=f"shared eval data not at {EVAL_DATA}")


@needs_data
def test_every_shipped_row_holds_against_the_corpora(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--data-dir", str(EVAL_DATA)]) == 0
    assert "0 problems" in capsys.readouterr().out


@needs_data
def test_the_checker_fails_rows_the_corpus_contradicts() -> None:
    rows = {r.id: r for r in load_sets(SETS)}
    broken = [
        replace(rows["una_atlas7_07"], absent=("E42",)),                        # a real error code
        replace(rows["num_hr_01"], expected=("Requests are answered within 4 working days",)),
        replace(rows["neg_rfc_05"], polarity="positive"),                      # the sentence says "do not"
        replace(rows["num_acq_01"], value="$2.4 million"),
        replace(rows["neg_pydocs_05"], query="Comma is not an operator in Python."),  # copied, not asked
    ]
    report = check_sets(broken, EVAL_DATA, ())
    failed = sorted({p.split(":")[0] for p in report.problems})
    assert failed == sorted(r.id for r in broken), report.problems
