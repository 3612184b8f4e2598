"""The hand-written answer sets: their format and their size (the corpus checks: tests/integration)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eval.answer_sets import SETS, AnswerSetError, is_answer_set_file, load_rows, load_sets


def _write(tmp_path: Path, *rows: dict[str, object]) -> Path:
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_the_shipped_sets_load_with_the_sizes_the_issue_asks_for() -> None:
    rows = load_sets(SETS)
    kinds = [r.kind for r in rows]
    assert kinds.count("unanswerable") >= 40 and kinds.count("numeric") >= 20
    assert sum(1 for r in rows if r.kind == "negation" and r.polarity == "negative") >= 20
    assert any(r.kind == "negation" and r.polarity == "positive" for r in rows)
    assert {r.corpus for r in rows if r.kind == "unanswerable"} == {"acq", "atlas7", "hr", "docs", "rfc", "pydocs"}
    assert len({r.id for r in rows}) == len(rows)
    assert all(r.why_unanswerable and r.absent for r in rows if r.kind == "unanswerable")


@pytest.mark.parametrize("row, problem", [
    ({"id": "u", "corpus": "hr", "kind": "unanswerable", "query": "q?", "absent": ["x"], "expected": ["y"],
      "category": "c", "why_unanswerable": "w"}, "no expected"),
    ({"id": "u", "corpus": "hr", "kind": "unanswerable", "query": "q?", "category": "c",
      "why_unanswerable": "w"}, "absent"),
    ({"id": "n", "corpus": "hr", "kind": "negation", "query": "q?", "expected": ["is not"]}, "polarity"),
    ({"id": "m", "corpus": "hr", "kind": "numeric", "query": "q?", "expected": ["3 days"]}, "value"),
    ({"id": "k", "corpus": "hr", "kind": "trivia", "query": "q?"}, "kind must be"),
])
def test_malformed_rows_are_rejected_with_file_and_line(tmp_path: Path, row: dict[str, object], problem: str) -> None:
    path = _write(tmp_path, row)
    with pytest.raises(AnswerSetError, match=problem) as info:
        load_rows(path)
    assert f"{path}:1" in str(info.value)


def test_answer_set_files_are_told_apart_from_gold_files(tmp_path: Path) -> None:
    assert is_answer_set_file(_write(tmp_path, {"id": "n", "kind": "numeric", "query": "q", "expected": ["1"],
                                                "value": "1"}))
    assert not is_answer_set_file(_write(tmp_path, {"id": "g", "query": "q", "expected": ["1"]}))
