"""The routing (`rag_system.agent.triage.route_message`, decided once, in the RAG API) on a labelled table.

Why: a chat message must not search the documents for "hi"
(the answer would be a refusal) and must never answer a document question
with a canned greeting. The table leans on the traps: questions that open
with a greeting, words that contain greeting words ("which", "this",
"machine", "history", "hike", "yoga"), short document questions, and
smalltalk in many spellings, cases, punctuation and emoji.
"""

from __future__ import annotations

import pytest

from rag_system.agent.triage import RouteDecision, route_message

D, R = "direct", "rag"


def decide(message: str, *, index_ids: list[str], options: dict) -> RouteDecision:  # type: ignore[type-arg]
    """The routing as a chat request reaches it: linked indexes, and the options it names."""
    return route_message(message, has_index=bool(index_ids), force_rag=bool(options.get("force_rag")),
                has_filters=bool(options.get("filters")), task=options.get("task"))
LINKED = ["3f2a9c0e6b7d4e21a5c8f0d9e1b2c3d4"]

#: (message, route when the session has a linked index)
TABLE: list[tuple[str, str]] = [
    # greetings, every way people type them
    ("hi", D), ("Hi!", D), ("HELLO", D), ("hello there", D), ("Hey!", D), ("hey there 👋", D), ("👋", D),
    ("good morning", D), ("Good Evening!", D), ("good afternoon docent", D), ("hiya", D), ("howdy!", D),
    ("yo", D), ("sup?", D), ("hello again", D), ("Hi, how are you?", D), ("how are you today?", D),
    ("how's it going", D), ("hola", D), ("bonjour!", D), ("greetings", D), ("hello everyone", D),
    ("  hey  ", D), ("hi docent!", D), ("nice to meet you", D), ("are you there?", D),
    # thanks
    ("thanks", D), ("thank you!", D), ("Thanks a lot", D), ("thx", D), ("ty", D), ("cheers!", D),
    ("thank you so much", D), ("thanks for the help", D), ("Thanks for your answer!", D), ("ok thanks", D),
    ("great, thank you", D), ("much appreciated", D), ("🙏", D), ("many thanks", D), ("thanks, bye!", D),
    # farewells
    ("bye", D), ("goodbye!", D), ("see you later", D), ("see ya", D), ("good night", D), ("take care", D),
    ("have a great day", D), ("that's all", D), ("ok bye", D), ("bye bye", D), ("cya", D),
    # acknowledgements
    ("ok", D), ("okay.", D), ("cool", D), ("got it", D), ("makes sense", D), ("perfect", D), ("👍", D),
    ("I see", D), ("great", D), ("understood", D), ("sounds good", D), ("alright", D),
    # questions about the assistant
    ("who are you?", D), ("what are you", D), ("what's your name?", D), ("who made you?", D),
    ("are you a bot?", D), ("are you an AI?", D), ("what model are you using?", D), ("what can you do?", D),
    ("how can you help me?", D), ("help", D), ("what can I ask you?", D), ("tell me about yourself", D),
    ("introduce yourself", D), ("what is docent?", D), ("how do you work?", D), ("is my data private?", D),
    ("do you use the internet?", D), ("hi, who are you?", D), ("hello, what can you do?", D),
    # document questions that open with a greeting word
    ("hi, what does section 4 say about refunds?", R), ("hello, summarise the contract", R),
    ("hey can you find the termination clause", R), ("thanks, now what is the notice period?", R),
    ("ok and what about the warranty?", R), ("good morning, what is the deadline for the tender?", R),
    ("hi what is the revenue", R), ("hey, who signed the agreement?", R), ("thanks! and the penalty fee?", R),
    # words that merely contain greeting words
    ("which", R), ("which clause applies?", R), ("this", R), ("this report", R), ("machine learning", R),
    ("history of the project", R), ("hike in prices", R), ("yoga policy", R), ("shipment delays", R),
    ("hiring plan", R), ("hello world example in the manual", R), ("thanksgiving schedule", R),
    ("byelaws of the association", R), ("okra supply chain", R), ("heyday of the company", R),
    ("thermal limits", R), ("hierarchy chart", R), ("yokohama office address", R),
    # short document questions
    ("revenue 2023?", R), ("summarise", R), ("summary please", R), ("key risks", R), ("who is the CEO?", R),
    ("what is the budget?", R), ("deadline?", R), ("page 12", R), ("table 3", R), ("section 2.1", R),
    ("appendix B", R), ("warranty period", R), ("GDPR", R), ("EBITDA margin", R), ("list the authors", R),
    ("termination", R), ("what is clause 7", R), ("define force majeure", R), ("any penalties?", R),
    ("who approved it?", R), ("when does it expire?", R), ("main findings", R), ("conclusion", R),
    ("what changed in v2?", R), ("compare 2022 and 2023", R), ("where is the office?", R),
    # follow-ups that need the documents
    ("and in 2022?", R), ("what about the second one?", R), ("tell me more", R), ("why?", R),
    ("explain that", R), ("can you elaborate on point 3", R), ("more details please", R),
    ("what does it mean", R), ("is that in the contract?", R), ("who said that", R),
    # long messages (more than six words) are never smalltalk
    ("hi there, thanks for the help earlier, one more thing", R),
    ("thank you very much for all the answers so far today", R),
    ("hello, I would like to know the total cost of the project", R),
    ("can you help me find the section about data retention", R),
    ("what can you tell me about the safety procedures in chapter 5", R),
    ("who are you going to contact about the audit findings", R),
    # questions about the assistant's subject that are really about documents
    ("who are the parties?", R), ("what are the risks?", R), ("what is the name of the supplier?", R),
    ("who made the decision?", R), ("what model number is the pump?", R), ("how does the process work?", R),
    ("what do the results show?", R), ("help desk phone number", R), ("what can be claimed?", R),
    # other languages and odd input still default to search
    ("wie hoch ist der Umsatz?", R), ("quel est le budget?", R), ("¿cuál es el plazo?", R),
    ("1234", R), ("???", D), ("...", D), ("", D),
]


def test_table_is_large_enough() -> None:
    assert len(TABLE) >= 150
    assert len({m for m, _ in TABLE}) == len(TABLE), "duplicate messages in the table"


@pytest.mark.parametrize(("message", "expected"), TABLE)
def test_gate_with_a_linked_index(message: str, expected: str) -> None:
    assert decide(message, index_ids=LINKED, options={}).route == expected


@pytest.mark.parametrize(("message", "_expected"), TABLE)
def test_force_rag_and_filters_always_search(message: str, _expected: str) -> None:
    assert decide(message, index_ids=LINKED, options={"force_rag": True}).route == R
    assert decide(message, index_ids=[], options={"force_rag": True}).route == R
    assert decide(message, index_ids=LINKED, options={"filters": {"document_name": "a.pdf"}}).route == R


@pytest.mark.parametrize(("message", "_expected"), TABLE)
def test_without_an_index_everything_is_direct(message: str, _expected: str) -> None:
    decision = decide(message, index_ids=[], options={})
    assert decision.route == D
    assert decision.reason == "no_index"


def test_reasons() -> None:
    assert decide("hello", index_ids=LINKED, options={}).reason == "smalltalk:greeting"
    assert decide("what is the budget?", index_ids=LINKED, options={}).reason == "document_question"
    assert decide("hello", index_ids=LINKED, options={"force_rag": True}).reason == "force_rag"
    assert decide("hello", index_ids=LINKED, options={"filters": {"page_start": 2}}).reason == "filters"


def test_empty_filters_object_does_not_force_search() -> None:
    assert decide("hello", index_ids=LINKED, options={"filters": {}}).route == D
    assert decide("hello", index_ids=LINKED, options={"force_rag": False}).route == D


def test_a_task_always_searches_even_when_worded_like_small_talk() -> None:
    decision = decide("thanks, summarize it", index_ids=["i"], options={"task": "summary"})
    assert (decision.route, decision.reason) == ("rag", "task:summary")
    assert decide("thanks", index_ids=["i"], options={"task": "qa"}).route == "direct"
