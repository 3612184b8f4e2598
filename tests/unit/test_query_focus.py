"""Which sentence of a compound query is searched on its own."""

from __future__ import annotations

import pytest

from rag_system.retrieval.query_focus import focus_question


@pytest.mark.parametrize("query, focus", [
    ("RFC 9220 bootstraps WebSockets over HTTP/3. Where was the pseudo-header first defined?",
     "Where was the pseudo-header first defined?"),
    ("Which document sets the cap? It says so in section 4. Please cite it.", "Which document sets the cap?"),
    ("The deal closed in May. List the escrow terms.", "List the escrow terms."),  # no question mark: the last
    ("What is the default ack_delay_exponent?", None),  # one sentence: nothing to focus
    ("My program is too slow. Why?", None),  # too short to stand alone
    ("", None),
])
def test_focus_question(query: str, focus: str | None) -> None:
    assert focus_question(query) == focus
