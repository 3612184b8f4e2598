"""Which of an answer's sentences the reply judge reads, and how much of the question each holds.

The judge itself runs the packaged model (tests/integration/test_reply_judge.py); what it is shown
decides what its "Yes"/"No" rests on, so the choice is pinned here.
"""

from __future__ import annotations

from rag_system.generation.replying import MAX_JUDGED, answering_sentences
from rag_system.grounding.terms import coverage

QUESTION = "If my carried-over leave days expire unused, do I get paid for them?"


def test_quoted_list_items_are_read_without_their_bullets_and_markers() -> None:
    answer = ("- A maximum of 5 unused annual leave days may be carried into the following year. [1]\n"
              "- Carried days expire on 31 March and are not paid out on expiry. [1]")
    assert answering_sentences(QUESTION, answer) == [
        "A maximum of 5 unused annual leave days may be carried into the following year.",
        "Carried days expire on 31 March and are not paid out on expiry."]


def test_sentences_holding_more_of_the_question_come_first() -> None:
    answer = "Northwind Robotics recognises 9 public holidays. [1] An employee rostered to work on a public " \
             "holiday receives a substitute day off within the same quarter. [1]"
    got = answering_sentences("If I'm rostered on a public holiday, do I get another day off for it?", answer)
    assert got[0].startswith("An employee rostered")


def test_a_sentence_about_something_else_is_not_judged() -> None:
    answer = "Dear Mr. Mitchell, thank you for your letter. [1] Carried days are not paid out on expiry. [1]"
    assert answering_sentences(QUESTION, answer) == ["Carried days are not paid out on expiry."]


def test_at_most_a_few_sentences_are_judged() -> None:
    answer = " ".join(f"Carried leave days expire on day {n}. [1]" for n in range(10))
    assert len(answering_sentences(QUESTION, answer)) == MAX_JUDGED


def test_names_count_double_in_a_sentence_share() -> None:
    question = "Does QUIC use TLS for its handshake?"
    assert coverage(question, ["QUIC uses TLS for its handshake."])[0] == 1.0
    assert coverage(question, ["QUIC is fast."])[0] == 2 * coverage(question, ["The handshake is fast."])[0] == 0.4
    assert answering_sentences("Is it so?", "It is so. [1]") == []  # a question without terms: nothing to judge


def test_a_sentence_sharing_one_word_of_a_short_question_is_not_judged() -> None:
    answer = "A reranker that fails to load is skipped; there is no fallback reranker. [1]"
    assert answering_sentences("Is the reranker switched on out of the box?", answer) == []
