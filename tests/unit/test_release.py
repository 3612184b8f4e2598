"""Nothing unchecked on screen: the stream carries a model's sentences only once each is checked.

The model is the scripted backend of test_synthesis (it stands in for an external LLM); validation,
the verifier, the release of sentences and the events are the real ones. Every `token` event is
what a client paints, so these tests read the answer a person saw from those events.
"""

from __future__ import annotations

import threading

from rag_system.generation.synthesis import Cancelled, SynthesisOptions, Synthesizer
from rag_system.generation.registry import ExtractiveBackend
from rag_system.grounding.terms import strip_markers
from tests.unit.test_synthesis import BLOCKS, QUESTION, Scripted, block, run_with_data

RIGHT = "If this value is absent, a default value of 3 is assumed [1]."
WRONG = "Values above 30 are invalid [1]."  # the passage says above 20
ALSO = "The exponent is used to decode the ACK Delay field [1]."


def shown(events: list[tuple[str, dict]]) -> str:
    return "".join(d["text"] for e, d in events if e == "token")


def sentences(text: str) -> list[str]:
    return [" ".join(strip_markers(s).split()) for s in text.replace("\n", " ").split(". ") if s.strip()]


def test_a_sentence_that_fails_is_never_streamed_and_the_rest_is_the_answer():
    answer, events = run_with_data(Scripted(f"{RIGHT} {WRONG} {ALSO}"))
    seen = shown(events)
    assert "30" not in seen and "above" not in seen
    assert RIGHT.rstrip(".") in seen and "decode the ACK Delay field" in seen
    assert answer.answer.strip() == seen.strip()  # what was shown is the answer: nothing taken back
    assert answer.answer_source == "llm_repaired" and answer.first_validation["dropped"] == 1
    assert [e for e, _ in events].count("checking") == 3


def test_every_sentence_shown_is_in_the_final_answer_when_a_quote_is_added():
    # a true sentence that does not give the value asked for waits; the draft never gives it,
    # so nothing is shown and the model's repair round (its second answer) decides
    backend = Scripted(ALSO, RIGHT)
    answer, events = run_with_data(backend)
    seen = shown(events)
    final = " ".join(strip_markers(answer.answer).split())
    assert all(s in final for s in sentences(seen)), (seen, answer.answer)
    assert "default value of 3" in answer.answer and len(backend.prompts) == 2


def test_stop_keeps_only_checked_sentences():
    cancel = threading.Event()
    events: list[tuple[str, dict]] = []

    def emit(event: str, data: dict) -> None:
        events.append((event, data))
        if event == "token":
            cancel.set()  # the person presses Stop as the first sentence appears

    backend = Scripted(f"{RIGHT} {WRONG} {ALSO} {RIGHT}")
    try:
        Synthesizer().answer(QUESTION, BLOCKS, [backend, ExtractiveBackend()], SynthesisOptions(), emit, cancel)
    except Cancelled:
        pass
    assert shown(events).strip() == RIGHT


def test_a_yes_no_answer_opens_with_what_the_passage_says():
    policy = block(1, "Annual leave is not paid out on resignation unless the employee has served more than 6 "
                      "months. Contractors engaged through an agency are not covered by this policy.",
                   name="leave_policy.pdf", page=3)
    question = "Are contractors engaged through an agency covered by the leave policy?"
    answer, events = run_with_data(Scripted("Contractors engaged through an agency are not covered by this "
                                            "policy [1]."), question, [policy])
    assert shown(events).startswith("No. Contractors")
    assert answer.answer.startswith("No. ") and answer.answer_source == "llm"


def test_nothing_is_streamed_when_no_sentence_passes():
    answer, events = run_with_data(Scripted(WRONG, WRONG))
    assert shown(events) == ""
    assert answer.answer_source in ("extractive", "refusal") and "30" not in answer.answer


def test_a_quote_answering_a_yes_no_question_says_yes_or_no():
    policy = block(1, "Annual leave is not paid out on resignation unless the employee has served more than 6 "
                      "months. Contractors engaged through an agency are not covered by this policy.",
                   name="leave_policy.pdf", page=3)
    question = "Are contractors engaged through an agency covered by the leave policy?"
    answer = Synthesizer().answer(question, [policy], [ExtractiveBackend()], SynthesisOptions())
    assert answer.answer_source == "extractive" and answer.answer.startswith("No."), answer.answer
    assert "Contractors engaged through an agency are not covered" in answer.answer


LITERALS = block(1, "There is no limit for the length of integer literals apart from what can be stored in available "
                    "memory.\nNote that leading zeros in a non-zero decimal number are not allowed. This is for "
                    "disambiguation with C-style octal literals, which Python used before version 3.0.\nSome examples "
                    "of integer literals: 7 2147483647 0o177\nChanged in version 3.6: Underscores are now allowed for "
                    "grouping purposes in literals.", name="reference__lexical_analysis.md")


def test_a_sentence_pointing_back_at_one_held_back_is_held_too():
    question = "Can I write a decimal integer literal with a leading zero, like 09, in Python?"
    draft = ("Yes, you can write a decimal integer literal with a leading zero, like 09, in Python. "
             "This is allowed and is used for disambiguation with C-style octal literals. [1]")
    backend = Scripted(draft, "Leading zeros in a non-zero decimal number are not allowed [1].", "No")
    answer, events = run_with_data(backend, question=question, blocks=[LITERALS])
    assert "allowed and is used" not in shown(events) and "allowed and is used" not in answer.answer
    assert "not allowed" in answer.answer
