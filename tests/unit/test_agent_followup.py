"""Standalone follow-ups, from the turns a request carries.

Why: retrieval sees one query; "how does it handle loss?" must become "How
does QUIC handle loss?" or it retrieves noise. Equally important, a question
that already stands alone must come back untouched, so the table holds many
self-contained questions asked after an unrelated turn.
"""

from __future__ import annotations

import pytest

from rag_system.agent.followup import Rewrite, accept_rewrite, standalone_query
from rag_system.agent.types import Turn

LIST_ANSWER = ("The transport parameters are:\n1. **max_idle_timeout**: the idle timeout [1]\n"
               "2. ack_delay_exponent - scales the ACK Delay field [2]\n3. max_ack_delay")

#: (previous user question, previous answer, follow-up, expected standalone query or None if unchanged)
TABLE: list[tuple[str, str, str, str | None]] = [
    # pronouns
    ("What is QUIC?", "", "How does it handle packet loss?", "How does QUIC handle packet loss?"),
    ("What is QUIC?", "", "What are its advantages?", "What are QUIC's advantages?"),
    ("How is the late fee calculated?", "", "When is it due?", "When is the late fee due?"),
    ("Tell me about the retry policy", "", "Is it configurable?", "Is the retry policy configurable?"),
    ("What is the default value of ack_delay_exponent?", "", "How is it encoded?",
     "How is the default value of ack_delay_exponent encoded?"),
    ("Explain the termination clauses", "", "Are they mutual?", "Are the termination clauses mutual?"),
    ("Who is the landlord?", "", "What is his address?", "What is the landlord's address?"),
    ("What is connection migration?", "", "Why is that needed?", "Why is connection migration needed?"),
    ("What is QUIC?", "", "What does this one guarantee?", "What does QUIC guarantee?"),
    ("QUIC loss detection", "", "how does it work?", "How does QUIC loss detection work?"),
    ("Summarise the warranty terms for the printer", "", "do they cover toner?",
     "Do the warranty terms for the printer cover toner?"),
    # "what about X?"
    ("What is the default value of ack_delay_exponent?", "", "what about max_ack_delay?",
     "What is the default value of max_ack_delay?"),
    ("What is the default value of ack_delay_exponent?", "", "and for max_ack_delay?",
     "What is the default value of max_ack_delay?"),
    ("What is QUIC?", "", "What about TCP?", "What is TCP?"),
    ("How is the fee calculated?", "", "how about the deposit?", "How is the deposit calculated?"),
    ("Who signed the 2021 contract?", "", "what about the 2022 one?",
     "Who signed the 2021 contract? What about the 2022 one?"),
    ("What is the warranty period for the X200 printer?", "", "and for the X300?",
     "What is the warranty period for the X300?"),
    ("What is the warranty period for the X200 printer?", "", "what about batteries?",
     "What is the warranty period for batteries?"),
    ("What is the warranty period for the X200 printer?", "", "Is that transferable?",
     "Is the warranty period for the X200 printer transferable?"),
    ("Is the deposit refundable?", "", "When is it paid back?", "When is the deposit paid back?"),
    # ordinals against the previous answer's list
    ("Which transport parameters are defined?", LIST_ANSWER, "and the second one?",
     "Tell me about ack_delay_exponent"),
    ("Which transport parameters are defined?", LIST_ANSWER, "tell me about the first one",
     "Tell me about max_idle_timeout"),
    ("Which transport parameters are defined?", LIST_ANSWER, "What is the default of the last one?",
     "What is the default of max_ack_delay?"),
    ("What is QUIC?", "QUIC is a transport [1].", "and the second one?", "What is QUIC? And the second one?"),
    # bare ellipsis
    ("Is QUIC encrypted?", "", "why?", "Is QUIC encrypted? Why?"),
    ("Is QUIC encrypted?", "", "Why is that?", "Is QUIC encrypted? Why is that?"),
    ("What changed in version 2?", "", "examples?", "What changed in version 2? Examples?"),
    ("Is the deposit refundable?", "", "how so", "Is the deposit refundable? How so?"),
    # self-contained: unchanged
    ("What is QUIC?", "", "What does section 4 say about refunds?", None),
    ("What is QUIC?", "", "How does QUIC handle packet loss?", None),
    ("What is QUIC?", "", "Is it possible to cancel the subscription online?", None),
    ("What is QUIC?", "", "What does this section say about TLS?", None),
    ("What is QUIC?", "", "List all deadlines in the contract", None),
    ("What is QUIC?", "", "Who is the landlord?", None),
    ("What is QUIC?", "", "What is the capital of Mongolia?", None),
    ("What is QUIC?", "", "How does QUIC use it?", None),  # already names the subject
    ("Tell me about the lease", "", "What is the first step of the handshake?", None),
    ("Tell me about the lease", "", "What are the terms and conditions?", None),
    ("Tell me about the lease", "", "and", None),
    ("Tell me about the lease", "", "Explain this clause", None),
    ("Tell me about the lease", "", "Is this section binding for tenants?", None),
]


@pytest.mark.parametrize("previous, answer, query, expected", TABLE)
def test_rules_table(previous: str, answer: str, query: str, expected: str | None) -> None:
    history = [Turn("user", previous)] + ([Turn("assistant", answer)] if answer else [])
    result = standalone_query(query, history)
    if expected is None:
        assert (result.query, result.rewritten, result.method) == (query.strip(), False, "none")
    else:
        assert (result.query, result.rewritten, result.method) == (expected, True, "rules")
        assert result.reason


def test_no_history_means_unchanged() -> None:
    assert standalone_query("How does it work?", []) == Rewrite("How does it work?", False, "none")
    only_answers = [Turn("assistant", "Hello! I'm Docent.")]
    assert standalone_query("How does it work?", only_answers).rewritten is False


def test_resolves_against_the_latest_user_turn_and_its_standalone_form() -> None:
    history = [Turn("user", "What is TCP?"), Turn("assistant", "..."),
               Turn("user", "what about QUIC?", standalone="What is QUIC?"), Turn("assistant", "...")]
    assert standalone_query("How does it handle loss?", history).query == "How does QUIC handle loss?"


class Scripted:
    """Stands in for an external LLM: a fixed reply, prompts recorded."""

    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.prompts: list[str] = []

    def __call__(self, prompt: str, *, max_tokens: int) -> str:
        self.prompts.append(prompt)
        return self.reply


HISTORY = [Turn("user", "What is the retransmission timeout in QUIC?"), Turn("assistant", "It is ...")]


def test_llm_rewrite_accepted_when_it_keeps_the_words() -> None:
    gen = Scripted("Rewritten question: How is the QUIC retransmission timeout computed?")
    result = standalone_query("How is it computed?", HISTORY, gen)
    assert result == Rewrite("How is the QUIC retransmission timeout computed?", True, "llm",
                             "follow-up rewritten by the LLM")
    assert "What is the retransmission timeout in QUIC?" in gen.prompts[0]


@pytest.mark.parametrize("reply", [
    "",  # nothing
    "How is the QUIC retransmission timeout determined?",  # dropped "computed"
    "How is the TCP congestion window computed?",  # invented words
    "It is computed from the smoothed RTT plus four times the RTT variance, as the RFC explains "
    "in great detail over several paragraphs which go on and on and on.",  # answered instead
])
def test_unusable_llm_rewrite_falls_back_to_rules(reply: str) -> None:
    result = standalone_query("How is it computed?", HISTORY, Scripted(reply))
    assert result.method == "rules"
    assert result.query == "How is the retransmission timeout in QUIC computed?"


def test_llm_not_asked_for_self_contained_questions() -> None:
    gen = Scripted("anything")
    assert standalone_query("What is the capital of Mongolia?", HISTORY, gen).rewritten is False
    assert gen.prompts == []


def test_accept_rewrite_allows_plurals_and_context_words() -> None:
    assert accept_rewrite("what are the fees?", "What are the late fee amounts?", "the late fee amounts")
    assert not accept_rewrite("what are the fees?", "What are the fees?", "")
