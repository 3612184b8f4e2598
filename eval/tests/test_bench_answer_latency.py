"""The latency benchmark waits for the model where the RAG API reports it, against a real API.

Why: it read a `preload` key that `/health` does not have at the top level, waited its full 600 s
for every run and then timed nothing it meant to; the benchmark never said so.
"""

from __future__ import annotations

import time
from pathlib import Path

from eval.bench_answer_latency import wait_for_model
from testkit.processes import RagApiProcess, free_port


def test_the_wait_ends_when_the_api_reports_its_model_settled(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    api = RagApiProcess(tmp_path / "store" / "data", free_port(), "http://127.0.0.1:9", log_dir=logs,
                        LLM_BACKEND="extractive", LLM_PRELOAD="true")
    api.start(wait_s=240)
    try:
        t0 = time.monotonic()
        preload = wait_for_model(api, 30)
        assert preload.get("state") == "nothing to load", preload
        assert time.monotonic() - t0 < 30  # it stopped because the state said so, not at the deadline
    finally:
        api.stop()
    assert list(logs.glob("rag-api-*.log")), "the server's log goes where the caller says"
    assert not list((tmp_path / "store").glob("rag-api-*.log"))
