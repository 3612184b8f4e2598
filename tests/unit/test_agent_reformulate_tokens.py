"""Reformulation for a weak first stage, `pick_better`, and the token ledger.

Why: the retry must produce a genuinely different query (or none), must not
be steered by off-topic passages, and the better of the two candidate sets is
kept whole. Token accounting is summed from several threads, so it is locked.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import pytest

from rag_system.agent.reformulate import accept_reformulation, feedback_terms, pick_better, reformulate
from rag_system.agent.tokens import TokenLedger
from tests.unit.scripted import Scripted

TOP = [
    "The ack_delay_exponent transport parameter scales the ACK Delay field; the default exponent is 3.",
    "Values of ack_delay_exponent above 20 are invalid. The ACK Delay field is multiplied by 2 to the exponent.",
    "Congestion control uses a window that grows on every acknowledgement.",
]


@pytest.mark.parametrize("query, top, expected", [
    ("What does the RFC say about the ack_delay_exponent?", TOP, "rfc ack_delay_exponent ack delay field"),
    ("What does the RFC say about the ack_delay_exponent?", [], "rfc ack_delay_exponent"),
    ("How do I cancel my subscription?", ["Nothing relevant here.", "Also nothing."], "cancel subscription"),
    ("Could you please explain what the termination clause means?", [], "termination clause"),
])
def test_rules(query: str, top: list[str], expected: str) -> None:
    assert reformulate(query, top) == expected


@pytest.mark.parametrize("query", ["what is it?", "", "ack_delay_exponent", "termination clause"])
def test_none_when_no_different_query_can_be_made(query: str) -> None:
    assert reformulate(query, []) is None


def test_feedback_ignores_passages_sharing_no_query_word() -> None:
    off_topic = ["Congestion window congestion window congestion", "congestion window growth window"]
    assert feedback_terms(["ack_delay_exponent"], off_topic) == []
    assert feedback_terms(["window"], off_topic) == ["congestion"]  # "growth": in one passage only


def test_feedback_from_one_passage_needs_repetition() -> None:
    assert feedback_terms(["lease"], ["The lease renews. Renewal notice: lease renewal requires notice."]) == \
        ["renewal", "notice"]


def test_llm_reformulation_used_when_on_topic() -> None:
    assert reformulate("How do I cancel my subscription?", [], Scripted("Keywords: cancel subscription "
                                                                       "termination notice")) == \
        "cancel subscription termination notice"


@pytest.mark.parametrize("reply", ["", "weather forecast tomorrow", "How do I cancel my subscription?",
                                   " ".join(["cancel"] * 30)])
def test_unusable_llm_reformulation_falls_back(reply: str) -> None:
    assert reformulate("How do I cancel my subscription?", [], Scripted(reply)) == "cancel subscription"


def test_accept_reformulation() -> None:
    assert accept_reformulation("refund policy for annual plans", "annual plan refund policy rules")
    assert not accept_reformulation("refund policy for annual plans", "shipping costs")


@dataclass
class Result:
    name: str
    evidence_score: float


def test_pick_better_keeps_the_better_set_ties_keep_the_first() -> None:
    a, b = Result("original", 0.30), Result("retry", 0.45)
    assert pick_better(a, b) is b
    assert pick_better(b, a) is b
    tie = Result("retry", 0.30)
    assert pick_better(a, tie) is a
    assert pick_better(a, b, margin=0.2) is a


def test_ledger_sums_by_stage() -> None:
    ledger = TokenLedger()
    assert ledger.to_json() == {"stages": {}, "total": {"prompt": 0, "completion": 0}}
    ledger.add("decompose", 120, 30)
    ledger.add("synthesis", 900, 150)
    ledger.add("decompose", 10, 5)
    ledger.add("repair", prompt_tokens=50)
    assert ledger.to_json() == {
        "stages": {"decompose": {"prompt": 130, "completion": 35}, "synthesis": {"prompt": 900, "completion": 150},
                   "repair": {"prompt": 50, "completion": 0}},
        "total": {"prompt": 1080, "completion": 185},
    }
    assert list(ledger.to_json()["stages"]) == ["decompose", "synthesis", "repair"]
    assert ledger.total == {"prompt": 1080, "completion": 185}


@pytest.mark.parametrize("args", [("", 1, 1), ("s", -1, 0), ("s", 0, 1.5), ("s", True, 0)])
def test_ledger_rejects_bad_counts(args: tuple) -> None:  # type: ignore[type-arg]
    with pytest.raises(ValueError):
        TokenLedger().add(*args)


def test_ledger_is_thread_safe() -> None:
    ledger = TokenLedger()

    def worker() -> None:
        for _ in range(1000):
            ledger.add("rerank", 3, 1)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert ledger.to_json()["stages"]["rerank"] == {"prompt": 24000, "completion": 8000}
