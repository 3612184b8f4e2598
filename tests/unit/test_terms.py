"""What a passage says, word by word: the terms a question's key terms are looked up in."""

from __future__ import annotations

from rag_system.grounding.terms import ask_coverage, held_by_meaning, key_terms, term_set


def test_two_words_in_a_row_say_their_closed_compound() -> None:
    said = term_set(["Any absence longer than 10 consecutive working days requires approval."])
    assert set(key_terms("more than ten back-to-back workdays")) - {"back"} <= said  # "ten", "workday"


def test_words_apart_or_across_a_sentence_end_are_not_joined() -> None:
    said = term_set(["The work is done. Days later it ships; work, day"])
    assert "workday" not in said
    assert {"work", "day"} <= said


def test_small_numbers_say_their_word_and_larger_ones_do_not() -> None:
    said = term_set(["Parental leave may be split into no more than 3 separate blocks over 36 months."])
    assert {*key_terms("three"), "3", "36"} <= said  # the stem a question's "three" has ("thre")
    assert "thirty-six" not in said and "thirtysix" not in said
    assert set(key_terms("five nine twelve")) <= term_set(["5, 9 and 12"])  # stems other than the word


def test_the_ask_is_found_in_a_word_of_the_same_meaning() -> None:
    question = "Who makes the Atlas-7, and where are they based?"
    share, lacking = ask_coverage(question, ["Model: Atlas-7 Dual Boiler Manufacturer: Meridian Coffee Systems"])
    assert (share, lacking) == (0.5, ["bas"])  # "makes" said as "Manufacturer"; "based" said by no word
    leave = "How can an employee obtain authorization for more than ten back-to-back workdays?"
    share, lacking = ask_coverage(leave, ["Any absence longer than 10 consecutive working days requires "
                                          "written approval from a director."])
    assert "authoriz" not in lacking and share > 0.33  # "approval" says "authorization"


def test_a_block_about_something_else_keeps_the_ask_lacking() -> None:
    share, lacking = ask_coverage("What is the annual salary of TechCorp's CEO James Mitchell?",
                                  ["James Mitchell signed the agreement as CEO.", "The company was founded in 2019."])
    assert (share, lacking) == (0.0, ["annual", "salary"])


def test_a_sentence_holds_a_term_in_another_form_of_the_word() -> None:
    question = "Are QUIC stateless resets cryptographically protected?"
    denial = "Note that Stateless Resets do not have any cryptographic protection."
    assert held_by_meaning(question, denial) == 4 / 6  # all but QUIC (a name, counted twice)
    assert held_by_meaning(question, "The protocol was designed in 2021.") == 0.0
    assert held_by_meaning("Who makes it?", "The manufacturer is Meridian.") == 1.0  # by a word of the same meaning
