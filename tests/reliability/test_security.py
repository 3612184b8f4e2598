"""With a token configured every route but /health refuses bad credentials; CORS refuses other origins."""

from __future__ import annotations

import pytest

from testkit.scenarios.security import run_security
from testkit.stack import Stack

pytestmark = pytest.mark.slow


def test_every_route_needs_the_token_and_cors_refuses_strangers(stack: Stack, intact: None) -> None:
    result = run_security(stack)
    assert not result.problems, "\n".join(result.problems)
    assert result.tried >= 34 * 7
