"""eval.bench_verify: both forms answered by a real RAG API, the figures printed and the draft's verdicts as labelled."""

from __future__ import annotations

import json

import pytest

from eval import bench_verify
from testkit import EVAL_DATA

pytestmark = pytest.mark.skipif(not (EVAL_DATA / bench_verify.POLICY).is_file(),
                                reason=f"shared eval data not at {EVAL_DATA}")


def test_one_round_of_each_form(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench_verify.main(["--data-dir", str(EVAL_DATA), "--rounds", "1"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["cores"] and len(report["load_before"]) == 3
    for form in ("sources", "index"):
        row = report[form]
        assert row["sentences"] == len(bench_verify.DRAFT) and row["request_p50_ms"] > 0
        assert set(row["verdicts"]) <= {"supported", "contradicted", "unsupported"}
    assert report["index"]["timings_ms_p50"].keys() == {"retrieval_ms", "verify_ms"}
