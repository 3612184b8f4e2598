"""Accounts under hostile use, both services (testkit/scenarios/auth_probe.py): 0 5xx, 0 crashes, right refusals."""

from __future__ import annotations

from pathlib import Path

import pytest

from testkit.scenarios.auth_probe import run_auth_probes

pytestmark = pytest.mark.slow


def test_auth_probes_are_refused_without_a_5xx(tmp_path: Path) -> None:
    result = run_auth_probes(tmp_path, storm=30)
    assert result.tried > 300
    assert not result.crashes, result.crashes[:10]
    assert result.five_xx == 0, result.problems[:10]
    assert not result.problems, result.problems[:20]
    assert result.statuses[401] > 100 and result.statuses[403] > 10 and result.statuses[429] > 0
