"""Faults injected into real processes: each scenario must leave no loss, no duplicate and no corruption.

Each scenario that kills a process starts its own gateway + RAG API; the
scenarios themselves live in `testkit.scenarios.faults` / `testkit.scenarios.faults_storage`, where
`python -m eval.stress` runs the same code and reports it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from testkit.model_server import ModelServer
from testkit.scenarios import faults
from testkit.stack import Stack

pytestmark = pytest.mark.slow


def _assert_survived(result: faults.FaultResult) -> None:
    assert result.survived, "\n".join(result.failures()) + f"\nall checks: {result.checks}"


def test_rag_api_killed_during_build_keeps_whole_documents(tmp_path: Path) -> None:
    _assert_survived(faults.rag_killed_during_build(tmp_path))


def test_gateway_killed_during_stream_still_gets_the_turn(tmp_path: Path) -> None:
    _assert_survived(faults.gateway_killed_during_stream(tmp_path))


def test_llm_server_killed_mid_answer_falls_back_with_valid_citations(
        stack: Stack, model_server: ModelServer, intact: None) -> None:
    _assert_survived(faults.llm_dies_mid_answer(stack, model_server))


def test_disk_full_is_a_clear_error_and_loses_nothing(tmp_path: Path) -> None:
    from testkit.scenarios.faults_storage import MountRefusedError, disk_full

    try:
        result = disk_full(tmp_path)
    except MountRefusedError as exc:
        pytest.skip(f"cannot mount a size-limited data directory here (needs root): {exc}")
    _assert_survived(result)


def test_sqlite_locked_requests_wait_or_fail_cleanly(tmp_path: Path) -> None:
    from testkit.scenarios.faults_storage import sqlite_locked

    _assert_survived(sqlite_locked(tmp_path))
