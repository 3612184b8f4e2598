"""A small version of the stress load: 10 sessions x 5 messages through the gateway while a build runs.

`python -m eval.stress --report` runs the full 50 x 10 and the soak; this
keeps the exactly-once and zero-error promises in every `make test`.
"""

from __future__ import annotations

import pytest

from testkit.scenarios.load_sessions import run_load
from testkit.stack import Stack

pytestmark = pytest.mark.slow


def test_concurrent_sessions_during_a_build_store_every_message_once(stack: Stack, intact: None) -> None:
    result = run_load(stack, sessions=10, messages=5, build_files=8)
    assert not result.errors, "\n".join(result.errors[:20])
    assert result.sent == 50
    assert result.stored_once == 50, "\n".join(result.storage_problems[:20])
    assert not result.storage_problems, "\n".join(result.storage_problems[:20])
    assert result.build_state == "done"
    assert set(result.memory) == {"gateway", "rag_api"}
