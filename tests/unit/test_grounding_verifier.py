"""The verifier reads what a sentence says: each kind of false claim is caught, true restatements kept.

Why: every false alarm sends a correct model answer to repair or quoting, and every miss lets a
wrong sentence through with a green badge. The passages are made up in the shape of the documents
people ask about (policies, manuals, forms, reference pages). This file holds the issue's kinds of
false claim, true restatements, verbatim quotes and how findings are worded; one case per rule is in
`test_grounding_rules.py`. The parser is the packaged `en_core_web_sm` the verifier always uses.
"""

from __future__ import annotations

import pytest

from rag_system.grounding.findings import CONTRADICTED, SUPPORTED, UNSUPPORTED
from rag_system.grounding.layout import fields
from rag_system.grounding.verifier import Source, verify
from tests.unit.grounding_check import APPROVERS, FORM, LEAVE, PORTS, check, kinds


# The six kinds of false claim.

def test_a_stitched_claim_is_contradicted() -> None:
    s = check(LEAVE, "Employees at Grade 7 and above must approve any absence longer than 10 consecutive working days.")
    assert s.verdict == CONTRADICTED
    assert "binding" in kinds(s)


def test_a_number_swap_is_contradicted() -> None:
    s = check(PORTS, "The backup server listens on 8443.")
    assert s.verdict == CONTRADICTED


def test_an_entity_swap_is_contradicted() -> None:
    s = check(APPROVERS, "Bob approves travel requests.")
    assert s.verdict == CONTRADICTED
    assert any("Alice, not Bob" in m for m in s.messages())


def test_a_reversed_polarity_is_contradicted() -> None:
    s = check("No guarantee is made that the job runs.", "Yes, the job is guaranteed to run.",
              "Is the job guaranteed to run?")
    assert s.verdict == CONTRADICTED
    assert {"polarity", "reply"} <= kinds(s)


@pytest.mark.parametrize("passage, claim, word", [
    ("Files may be compressed.", "Files must be compressed.", "modality"),
    ("Most modules support compression.", "All modules support compression.", "scope"),
    ("By default, the cache holds 128 entries.", "The cache always holds 128 entries.", "scope"),
    ("Backups are best kept on a read-only filesystem.", "Backups must be kept on a read-only filesystem.",
     "modality"),
    ("The installer adds only signed packages by default.", "The installer only ever adds signed packages.",
     "scope"),
    ("The start date is June 2, subject to board approval.", "The start date is unconditionally June 2.", "scope"),
    ("Retries must wait at least five seconds.", "Retries wait exactly five seconds.", "comparator"),
    # the marker before the stop: the tagger read "compressed ." as an adjective, whose root missed the verb's
    ("Files may be compressed.", "Files are compressed [1].", "modality"),
    # a verb too common to be a content word is still the clause's verb
    ("Endpoints MAY use a generic error code.", "Endpoints use a generic error code [1].", "modality"),
])
def test_an_overgeneralisation_is_contradicted(passage: str, claim: str, word: str) -> None:
    s = check(passage, claim)
    assert s.verdict == CONTRADICTED
    assert word in kinds(s)


def test_an_added_fact_is_unsupported() -> None:
    s = check("The Atlas-7 has a 2-litre tank. It requires descaling every 3 months.",
              "The Atlas-7 requires descaling every 3 months because hard water damages the boiler.")
    assert s.verdict == UNSUPPORTED


# True restatements stay supported.

@pytest.mark.parametrize("passage, claim, question", [
    ("No guarantee is made that the job runs.", "No, there is no guarantee that the job runs.",
     "Is the job guaranteed to run?"),
    ("Annual leave is not paid out on resignation unless the employee has served more than 6 months.",
     "No. Annual leave is paid out on resignation only when the employee has served more than six months.",
     "Is annual leave paid out after four months?"),
    ("A client which does not include the option must still accept the reply.",
     "A client that leaves out the option must still accept the reply.", ""),
    ("There is no need to restart the daemon just to reload its rules.",
     "No, you do not need to restart the daemon to reload its rules.",
     "Do I need to restart the daemon to reload its rules?"),
])
def test_a_restated_negation_is_supported(passage: str, claim: str, question: str) -> None:
    assert check(passage, claim, question).verdict == SUPPORTED


def test_a_verb_that_denies_by_itself_restates_a_negation() -> None:
    passage = "The slim image does not include the compiler."
    assert check(passage, "The slim image omits the compiler.").verdict == SUPPORTED
    assert check(passage, "The slim image ships the compiler.").verdict == CONTRADICTED


def test_two_sentences_combined_are_supported() -> None:
    passage = ("Format version 4 was added in release 3.4. It adds support for very large files. "
               "It is the default format starting with release 3.8.")
    assert check(passage, "Format version 4, added in release 3.4, is the default starting with release 3.8."
                 ).verdict == SUPPORTED
    assert check("The Atlas-7 has a 2-litre tank. It requires descaling every 3 months.",
                 "The Atlas-7 requires descaling every 3 months.").verdict == SUPPORTED


def test_a_claim_about_other_things_sharing_only_a_verb_is_not_in_the_passage() -> None:
    s = check("Annual leave is not paid out on resignation unless the employee has served more than 6 months.",
              "The office canteen serves vegan lunches on Fridays.")
    assert s.verdict == UNSUPPORTED, s.findings


def test_a_number_said_of_this_value_in_the_next_sentence_belongs_to_the_previous_one() -> None:
    passage = ("ack_delay_exponent (0x0a): The acknowledgment delay exponent is an integer value indicating an "
               "exponent used to decode the ACK Delay field in the ACK frame. If this value is absent, a default "
               "value of 3 is assumed (indicating a multiplier of 8).")
    assert check(passage, "The acknowledgment delay exponent is assumed to be 3 if this value is absent."
                 ).verdict == SUPPORTED
    # The sentence that refers back lends its number; one that does not is still another statement.
    assert check("The primary server listens on 8443. Its backup listens on 9443.",
                 "The primary server listens on 9443.").verdict == CONTRADICTED
    assert check(LEAVE, "Employees at Grade 7 and above must approve any absence longer than 10 consecutive "
                 "working days.").verdict == CONTRADICTED


@pytest.mark.parametrize("claim", [
    "Travel requests are approved by Alice.",
    "Expense claims are approved by Bob.",
    "Alice approves travel requests, and Bob approves expense claims.",
])
def test_passive_and_active_restatements_are_supported(claim: str) -> None:
    assert check(APPROVERS, claim).verdict == SUPPORTED


def test_restatements_in_other_words_are_supported() -> None:
    assert check(LEAVE, "A director must give written approval for any absence of more than ten consecutive "
                        "working days.").verdict == SUPPORTED
    assert check(PORTS, "The backup server listens on port 9443.").verdict == SUPPORTED
    # a modal named as a word is no modality of the sentence that defines it
    assert check('SHOULD This word means that there may exist valid reasons to ignore a particular item.',
                 "SHOULD means there may be valid reasons to ignore an item [1].").verdict == SUPPORTED


# Verbatim quotes always verify (the extractive fallback quotes its sources).

LIST = ("4.1 23 active customer contracts reviewed (see Schedule 2 - Material Contracts) 4.2 3 contracts contain "
        "change-of-control provisions requiring consent 4.3 Largest customer accounts for 28% of revenue")


@pytest.mark.parametrize("passage", [FORM, LIST, LEAVE, APPROVERS])
def test_verbatim_quotes_of_every_sentence_verify(passage: str) -> None:
    for sentence in [p for p in passage.split(". ") if p]:
        quote = sentence if sentence.endswith(".") else sentence + "."
        assert check(passage, quote).verdict == SUPPORTED, quote


def test_forms_are_cut_into_fields_and_items() -> None:
    assert fields(FORM) == ["Filing Date: January 10, 2025", "Transaction Value: $45,000,000",
                            "HSR Filing Fee: $30,000", "Buyer's Counsel: Morrison & Associates LLP",
                            "Seller's Counsel: Wilson & Partners LLP", "Escrow Agent: First National Trust"]
    assert fields(LIST) == ["4.1 23 active customer contracts reviewed (see Schedule 2 - Material Contracts)",
                            "4.2 3 contracts contain change-of-control provisions requiring consent",
                            "4.3 Largest customer accounts for 28% of revenue"]
    assert fields('Archives with "Pinned: yes" get 1; others get 500.') == [
        'Archives with "Pinned: yes" get 1; others get 500.']
    assert fields("Versions 3.8 and 3.9 support it.") == ["Versions 3.8 and 3.9 support it."]
    assert fields("Retention packages per Schedule 3 - Employee Transition Plan") == [
        "Retention packages per Schedule 3 - Employee Transition Plan"]


# Every finding says in plain words what is wrong.

@pytest.mark.parametrize("passage, claim, kind, words", [
    (PORTS, "The backup server listens on 8443.", "binding", "the passage says primary, not backup"),
    (APPROVERS, "Bob approves travel requests.", "binding", "the passage says Alice, not Bob"),
    ("The archive holds 28 files.", "The archive holds 30 files.", "fact", "the passage does not give 30"),
    ("The archive holds twelve files.", "The archive holds five files.", "number",
     "the passage says twelve, not five"),
    ("The archive keeps files.", "The archive keeps files for five years.", "fact", "the passage does not give five"),
    ("The service restarts nightly.", "The service restarts nightly after a kernel upgrade and firmware audit.",
     "added", "the passage does not say"),
    ("The file is not executable.", "The file is executable.", "polarity", "the passage says the opposite"),
    ("The feature is enabled.", "The feature is disabled.", "opposite", "the passage says \"enabl\", not \"disabl\""),
    ("Files may be compressed.", "Files must be compressed.", "modality", "the passage says \"may\", not \"must\""),
    ("Files may be compressed.", "Files are compressed.", "modality", "the passage says \"may\", not \"it as a fact\""),
    ("Most modules support compression.", "All modules support compression.", "scope",
     "the passage does not say \"all\" (it says \"most\")"),
    ("Retries must wait at least five seconds.", "Retries must wait at most five seconds.", "comparator",
     "the passage says at least 5, not at most 5"),
    ("Leave is approved only if the manager signs the form.", "Leave is approved.", "condition",
     "the passage says this only if"),
])
def test_each_finding_kind_speaks_plainly(passage: str, claim: str, kind: str, words: str) -> None:
    s = check(passage, claim)
    assert kind in kinds(s), s.findings
    assert any(words in m for m in s.messages()), s.messages()


def test_a_reply_against_the_source_says_what_the_source_answers() -> None:
    s = check("Parental leave may be split into no more than 3 separate blocks.",
              "Yes, parental leave may be split into no more than 3 separate blocks.",
              "Can parental leave be split into more than three blocks?")
    assert any(m.startswith("the passage answers no, not yes") for m in s.messages())


def test_a_citation_of_no_source_is_unsupported() -> None:
    result = verify("The archive holds 28 files [4].", [Source(1, "The archive holds 28 files.")])
    assert result.sentences[0].verdict == UNSUPPORTED
    assert result.sentences[0].messages() == ["it cites sources that do not exist: [4]"]


def test_a_yes_is_not_stitched_from_two_sentences() -> None:
    from rag_system.grounding.verifier import answer_to

    question = "Are QUIC stateless resets cryptographically protected?"
    stitched = [Source(1, "For the Stateless Reset to appear as a valid QUIC packet, the Unpredictable Bits field "
                          "needs to include at least 38 bits of data.", "rfc9000.txt"),
                Source(2, "Stateless reset tokens are cryptographically protected against guessing.", "rfc9000.txt")]
    assert answer_to(question, stitched) is None
    assert answer_to(question, [Source(1, "QUIC stateless resets are cryptographically protected.", "rfc9000.txt")]) \
        == "yes"
