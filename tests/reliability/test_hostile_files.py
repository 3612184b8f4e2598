"""Hostile files through the real upload and build path: each refused or failed with a reason, never a 5xx."""

from __future__ import annotations

from pathlib import Path

import pytest

from testkit.scenarios.hostile import HOSTILE_FILES, run_hostile
from testkit.stack import Stack

pytestmark = pytest.mark.slow


def test_hostile_files_fail_alone_with_a_reason(stack: Stack, intact: None, tmp_path: Path) -> None:
    result = run_hostile(stack, tmp_path)
    assert not result.problems, "\n".join(result.problems) + f"\n{result.outcomes}"
    assert set(result.outcomes) == set(HOSTILE_FILES)
    reasons = {name: o.get("reason") for name, o in result.outcomes.items() if o["expected"] != "indexed"}
    assert all(reasons.values()), reasons
    assert "too many pages" in reasons["pages-5000.pdf"]
    assert "unpacked" in reasons["bomb.docx"]
    assert "password" in reasons["encrypted.pdf"]
