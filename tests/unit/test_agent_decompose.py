"""Decomposition: compound questions split, ordinary ones never do.

Why: a wrong split costs recall ("terms and conditions" searched as two
things) and a missed split costs recall too (one embedding for two needs).
The table pins both sides; the LLM cases use a scripted generator standing in
for a tiny model that sometimes over-splits, drifts or fails.
"""

from __future__ import annotations

import pytest

from rag_system.agent.decompose import MAX_PARTS, Decomposition, decompose, validate_parts

#: (query, expected parts; [] means "not split")
TABLE: list[tuple[str, list[str]]] = [
    # not compound
    ("What are the terms and conditions?", []),
    ("What does section 4 say about refunds and returns?", []),
    ("Who pays and is liable for damages?", []),
    ("How are fees and penalties calculated?", []),
    ("What is the ack_delay_exponent?", []),
    ("List the rights and obligations of the tenant", []),
    ("how and why does congestion happen", []),
    ("What is QUIC? ", []),
    ("Explain flow control and congestion control in QUIC", []),
    ("Is encryption mandatory?", []),
    ("Describe the research and development budget", []),
    ("What happens when the client and the server disagree on the version?", []),
    ("What is the relationship between streams and connections?", []),
    ("Compare the terms and conditions of plan A and plan B", []),  # ambiguous "and": left whole
    ("", []),
    # two or more question marks
    ("What is QUIC? Also, how does it handle packet loss?",
     ["What is QUIC?", "How does QUIC handle packet loss?"]),
    ("What is the notice period? And what is the penalty for early termination?",
     ["What is the notice period?", "What is the penalty for early termination?"]),
    ("Who is the landlord? When does the lease end?", ["Who is the landlord?", "When does the lease end?"]),
    ("What is X1? What is Y1? What is Z1? What is W1?", ["What is X1?", "What is Y1?", "What is Z1? What is W1?"]),
    # "and" + a new question
    ("What is QUIC and how does it handle packet loss?", ["What is QUIC?", "How does QUIC handle packet loss?"]),
    ("How is the fee calculated and when is it due?", ["How is the fee calculated?", "When is the fee due?"]),
    ("Is there a refund and how do I get it?", ["Is there a refund?", "How do I get a refund?"]),
    ("What is QUIC and what are its advantages?", ["What is QUIC?", "What are QUIC's advantages?"]),
    ("What is the notice period, and who must sign the termination letter?",
     ["What is the notice period?", "Who must sign the termination letter?"]),
    ("what does the warranty cover and how long does it last",
     ["What does the warranty cover?", "How long does the warranty last?"]),
    ("Explain connection migration and why is it needed?",
     ["Explain connection migration", "Why is connection migration needed?"]),
    ("Is the warranty transferable and does it cover water damage?",
     ["Is the warranty transferable?", "Does the warranty cover water damage?"]),
    ("What is the price and what is the delivery date?", ["What is the price?", "What is the delivery date?"]),
    ("When was the contract signed and by whom?", []),
    ("What is the deposit and is it refundable?", ["What is the deposit?", "Is the deposit refundable?"]),
    ("What is QUIC; how does it differ from TCP?", ["What is QUIC?", "How does QUIC differ from TCP?"]),
    ("Define latency and explain how it is measured", ["Define latency", "Explain how latency is measured"]),
    ("Where is the data stored and who can access it?", ["Where is the data stored?", "Who can access the data?"]),
    # the subject survives the split (issue 18: "How are they split?" lost StartupXYZ)
    ("How many employees does StartupXYZ have, and how are they split?",
     ["How many employees does StartupXYZ have?", "How are StartupXYZ's employees split?"]),
    ("What did Northwind announce, and when did they publish it?",
     ["What did Northwind announce?", "When did Northwind publish it?"]),
    ("How much rent does the tenant pay and when is it due?",
     ["How much rent does the tenant pay?", "When is the tenant's rent due?"]),
    # comparisons: the question itself plus one question per side
    ("What is the difference between TCP and UDP?",
     ["What is the difference between TCP and UDP?", "What is TCP?", "What is UDP?"]),
    ("Compare TCP and UDP", ["Compare TCP and UDP", "What is TCP?", "What is UDP?"]),
    ("compare QUIC with TCP in terms of latency",
     ["compare QUIC with TCP in terms of latency", "What is the latency of QUIC?", "What is the latency of TCP?"]),
    ("How does QUIC differ from TCP?", ["How does QUIC differ from TCP?", "What is QUIC?", "What is TCP?"]),
    ("HTTP/2 vs HTTP/3", ["HTTP/2 vs HTTP/3", "What is HTTP/2?", "What is HTTP/3?"]),
    ("What are the main differences between the basic plan and the premium plan?",
     ["What are the main differences between the basic plan and the premium plan?",
      "What is the basic plan?", "What is the premium plan?"]),
]


@pytest.mark.parametrize("query, parts", TABLE)
def test_rules_table(query: str, parts: list[str]) -> None:
    result = decompose(query)
    if parts:
        assert result == Decomposition(parts, "rules")
    else:
        assert result.method == "none"
        assert result.parts == ([query.strip()] if query.strip() else [])
        assert not result.is_compound


@pytest.mark.parametrize("query, _", TABLE)
def test_never_more_than_three_parts(query: str, _: list[str]) -> None:
    assert len(decompose(query).parts) <= MAX_PARTS
    assert len(decompose(query, max_parts=2).parts) <= 2


def test_max_parts_one_turns_it_off() -> None:
    assert decompose("What is QUIC and how does it work?", max_parts=1) == \
        Decomposition(["What is QUIC and how does it work?"], "none")


def test_two_parts_cap_joins_the_rest() -> None:
    result = decompose("What is X1? What is Y1? What is Z1?", max_parts=2)
    assert result.parts == ["What is X1?", "What is Y1? What is Z1?"]


class Scripted:
    """Stands in for an external LLM: returns a fixed text and records prompts."""

    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.prompts: list[str] = []

    def __call__(self, prompt: str, *, max_tokens: int) -> str:
        self.prompts.append(prompt)
        return self.reply


class Broken:
    def __call__(self, prompt: str, *, max_tokens: int) -> str:
        raise ConnectionError("backend down")


LONG = "Which encryption algorithms does the product support for data at rest and which for backups"


def test_llm_used_only_when_rules_find_nothing_and_query_looks_compound() -> None:
    gen = Scripted("1. Which encryption algorithms does the product support for data at rest?\n"
                   "2. Which encryption algorithms does the product support for backups?")
    result = decompose(LONG, gen)
    assert result.method == "llm"
    assert result.parts == ["Which encryption algorithms does the product support for data at rest?",
                            "Which encryption algorithms does the product support for backups?"]
    short = Scripted("What is A?\nWhat is B?")
    assert decompose("What is QUIC?", short).method == "none" and not short.prompts
    rules = Scripted("unused")
    assert decompose("What is QUIC and how does it handle packet loss?", rules).method == "rules"
    assert not rules.prompts


@pytest.mark.parametrize("reply", [
    "",  # nothing
    LONG,  # one line: not compound
    "What is the weather today?\nWho won the football match yesterday?",  # drift
    "encryption algorithms?\nencryption algorithms?",  # duplicates
    "Which algorithms?\nWhat about backups?\nData at rest?\nAnd more?",  # too many
    "Which encryption algorithms are supported?\nWhich hashing and signing algorithms are used "
    "for passwords tokens certificates?",  # new words
])
def test_unusable_llm_output_is_discarded(reply: str) -> None:
    assert decompose(LONG, Scripted(reply)) == Decomposition([LONG], "none")


def test_failing_llm_falls_back() -> None:
    assert decompose(LONG, Broken()) == Decomposition([LONG], "none")


def test_validate_parts_needs_coverage() -> None:
    query = "What are the fees for late payment and the rules for refunds of annual plans"
    assert validate_parts(query, ["What are the fees for late payment?",
                                  "What are the rules for refunds of annual plans?"])
    assert not validate_parts(query, ["What are the fees for late payment?", "What are the fees?"])
