"""One case per rule of the verifier: removing the rule fails its case.

Why: the rules were found on real answers that went wrong (a word moved between clauses, a reason
attached to another fact, a denial read through other words); each case here is made up in the
same shape, so a change that loses a rule is seen without the claims set.
"""

from __future__ import annotations

import pytest

from rag_system.grounding.findings import CONTRADICTED, SUPPORTED, UNSUPPORTED
from rag_system.grounding.roots import root
from rag_system.grounding.verifier import Source, verify
from tests.unit.grounding_check import FORM, check


# Bindings: a word put where its source has another.

def test_a_value_of_another_field_is_contradicted() -> None:
    s = check(FORM, "Morrison & Associates LLP is the Seller's counsel.")
    assert s.verdict == CONTRADICTED
    assert any("Buyer" in m for m in s.messages())


def test_another_qualifier_of_the_same_noun_is_contradicted() -> None:
    passage = ("The legacy archive format is not guaranteed to be portable across releases. "
               "The modern archive format is guaranteed to be backwards compatible.")
    s = check(passage, "The modern archive format is not guaranteed to be portable across releases.")
    assert s.verdict == CONTRADICTED
    assert any("legacy" in m for m in s.messages())


def test_a_qualifier_that_only_picks_one_is_no_rival() -> None:
    passage = ("Each endpoint advertises a max_idle_timeout. The effective value is the minimum of the two "
               "advertised values (or the sole advertised value, if only one endpoint advertises a non-zero value).")
    assert check(passage, "The effective value is the smaller of the two advertised max_idle_timeout values, or the "
                          "only one if just one endpoint advertises a non-zero value.").verdict == SUPPORTED


def test_a_label_names_the_statements_under_it() -> None:
    codes = ("E11: Brew boiler thermistor open circuit. Replace sensor part TS-71. "
             "E23: Steam boiler overpressure. Check the relief valve at 12 bar.")
    assert check(codes, "Error E11 indicates a steam boiler overpressure.").verdict == CONTRADICTED
    assert check(codes, "Error E23 indicates a steam boiler overpressure.").verdict == SUPPORTED


def test_the_heading_of_a_later_record_lends_nothing_to_an_earlier_one() -> None:
    records = ("1. Northwind - OBTAINED Consent Received: March 3, 2025 Notes: Standard process. "
               "2. Contoso Ltd - OBTAINED Consent Received: March 9, 2025 Notes: Meeting held.")
    assert check(records, "Contoso Ltd's consent was received on March 3, 2025.").verdict != SUPPORTED
    assert check(records, "Contoso Ltd's consent was received on March 9, 2025.").verdict == SUPPORTED


def test_entries_of_another_numbered_record_lend_nothing() -> None:
    risks = ("2.1 Vendor Lock-in (MEDIUM) - Risk: Price increases at renewal - Mitigation: two-year price cap clause "
             "2.2 Migration Costs (MEDIUM) - Estimated migration costs: $1.1M over 9 months")
    assert check(risks, "The migration cost risk is mitigated by a two-year price cap clause.").verdict != SUPPORTED
    assert check(risks, "The vendor lock-in risk is mitigated by a two-year price cap clause.").verdict == SUPPORTED


def test_a_subject_from_a_statement_about_something_else_is_contradicted() -> None:
    passage = ("A job can be marked as urgent. The initial priority is copied from the parent job. "
               "The mark can be set through the urgent property or the urgent constructor argument.")
    assert check(passage, "The initial priority of the urgent mark is set through the urgent property or the urgent "
                          "constructor argument.").verdict == CONTRADICTED
    assert check(passage, "The urgent mark can be set through the urgent property.").verdict == SUPPORTED
    assert check("A ValueError is raised if the level number is invalid.",
                 "An invalid level raises ValueError.").verdict == SUPPORTED


def test_a_verb_from_another_clause_is_contradicted() -> None:
    passage = ("The agent is a program designed to let an operator run jobs and record job output. "
               "The agent requires only the operator's token.")
    s = check(passage, "The agent records the operator's token.")
    assert s.verdict == CONTRADICTED
    assert any("requires" in m for m in s.messages())


def test_a_subject_no_passage_names_is_contradicted_where_the_clause_has_its_own() -> None:
    s = check("The scheduler removes stale locks after every run.",
              "The supervisor removes stale locks after every run.")
    assert s.verdict == CONTRADICTED
    assert any("scheduler, not supervisor" in m for m in s.messages())


@pytest.mark.parametrize("claim", [
    "The maintenance script moves packages from the testing archive to the unstable archive.",
    "The signature check is less CPU intensive than the checksum computation.",
])
def test_a_thing_put_on_the_other_side_of_a_relation_is_contradicted(claim: str) -> None:
    passage = ("The maintenance script moves packages from the unstable archive to the testing archive. "
               "The checksum computation is less CPU intensive than the signature check.")
    assert check(passage, claim).verdict == CONTRADICTED


def test_a_comparison_turned_round_with_its_opposite_is_supported() -> None:
    assert check("The checksum computation is faster than the signature check.",
                 "The signature check is slower than the checksum computation.").verdict == SUPPORTED


# Links between clauses: a reason or condition attached to another fact.

def test_a_remedy_from_another_entry_is_not_linked() -> None:
    codes = ("E42: Pump cavitation detected. Prime the pump with 200 ml of water, then power cycle the unit. "
             "E57: Flow meter reports zero pulses. Clean the inlet mesh filter.")
    s = check(codes, "When pump cavitation is detected (E42), clean the inlet mesh filter.")
    assert s.verdict != SUPPORTED
    assert any("link" in m or "another statement" in m for m in s.messages())


def test_a_reason_the_passage_does_not_give_is_unsupported() -> None:
    passage = ("The generic function looks each algorithm up in a table. Named constructors are much faster "
               "than the generic function.")
    s = check(passage, "The generic function is slower than named constructors because it looks each algorithm "
                       "up in a table.")
    assert s.verdict == UNSUPPORTED
    assert any("reason" in m for m in s.messages())
    kept = check("The cache is cleared on restart, because it lives in process memory.",
                 "The cache is cleared on restart because it lives in process memory.")
    assert kept.verdict == SUPPORTED


def test_a_pronoun_that_refers_to_another_thing_in_the_passage_is_contradicted() -> None:
    passage = ("The legacy archive format is not guaranteed to be portable across releases. Because its main job is "
               "to support cached files, the maintainers may change the format. The modern archive format is "
               "guaranteed to be backwards compatible.")
    s = check(passage, "Because its main job is to support cached files, the modern archive format is guaranteed "
                       "to be backwards compatible.")
    assert s.verdict == CONTRADICTED
    assert any("legacy" in m for m in s.messages())


# Polarity read through other words.

@pytest.mark.parametrize("passage, claim", [
    ("There is no curses module for Windows.", "Yes, the Windows distribution includes the curses module."),
    ("The command is not recommended for the upgrade of a stable system.",
     "Yes, the command is the recommended tool for the upgrade of a stable system."),
    ("It is not the persistent message history and is lost on restart.",
     "It is stored in the persistent message history."),
])
def test_a_claim_in_other_words_takes_the_denial_of_what_it_restates(passage: str, claim: str) -> None:
    assert check(passage, claim).verdict == CONTRADICTED


def test_with_no_and_a_drop_deny_nothing() -> None:
    assert check("Consent Received: February 10, 2025 Notes: Consent granted with no additional conditions.",
                 "Consent was received on February 10, 2025, with no additional conditions.").verdict == SUPPORTED
    assert check("When the count of open tasks drops to zero, the wait ends.",
                 "The wait ends once the count of open tasks drops to zero.").verdict == SUPPORTED


def test_a_denial_after_a_dash_is_its_own_statement() -> None:
    assert check("License compliance verified - no copyleft issues identified.",
                 "License compliance was verified and no copyleft issues were identified.").verdict == SUPPORTED


def test_a_claim_is_checked_statement_by_statement_across_its_semicolon() -> None:
    passage = ('For normal archives without "Pinned: yes", the default priority is 500, while for archives '
               'with "Pinned: yes", the default priority is 1.')
    assert check(passage, 'It is 1; archives without "Pinned: yes" default to 500.',
                 'What is the default priority of a pinned archive?').verdict == SUPPORTED
    assert check(passage, 'Archives with "Pinned: yes" get a default priority of 500.').verdict == CONTRADICTED


def test_the_author_is_the_writer_of_a_first_person_passage() -> None:
    passage = "For a small office server running the stable release, I deliberately back up only the mail spool."
    assert check(passage, "For a small office server running the stable release, the author purposely backs up "
                          "only the mail spool.").verdict == SUPPORTED
    assert root("running") == root("run") and root("committed") == root("commit")
    assert root("installing") == root("install") and root("receive") == root("received")


def test_a_reason_inside_one_clause_needs_the_passage_to_give_it() -> None:
    passage = "When two threads call the function at once, they may receive the same value."
    assert check(passage, "Two threads calling the function at once may receive the same value, which is why "
                          "the function is slow.").verdict == UNSUPPORTED


def test_other_than_excepts_and_does_not_compare() -> None:
    s = check("Avoid using get_referrers() for any purpose other than debugging.",
              "get_referrers() should only be used for debugging, since its objects may be invalid.")
    assert not any("round" in m for m in s.messages()), s.messages()


def test_a_denial_of_the_main_verb_does_not_deny_what_is_said_by_the_way() -> None:
    passage = "Package managers do not even try to install packages with overlapped files using dependencies."
    assert check(passage, "Package managers do not try to install packages whose files overlap.").verdict == SUPPORTED
    assert check("The legacy format is not guaranteed to be portable across versions.",
                 "No, the legacy format is not portable across versions.",
                 "Is the legacy format portable across versions?").verdict == SUPPORTED


def test_items_numbered_from_the_start_of_a_passage_are_cut() -> None:
    passage = ("2.1 Earnout (MEDIUM) - Mitigation: third-party arbitration clause 2.2 Integration Costs (MEDIUM) - "
               "Estimated integration costs: $4.2M over 18 months")
    assert check(passage, "The integration cost risk is mitigated by a third-party arbitration clause."
                 ).verdict != SUPPORTED


def test_numbers_taken_with_what_they_count_from_items_of_one_record() -> None:
    record = ("1.2 Key Staff Retention (HIGH) - 4 senior designers critical to the roadmap - Mitigation: Retention "
              "packages per Schedule 3 - Estimated cost: $1.8M in retention bonuses")
    claim = "Retention bonuses for the 4 senior designers were estimated to cost $1.8M."
    assert check(record, claim).verdict == SUPPORTED
    items = ("4.1 12 supplier contracts reviewed 4.2 2 contracts contain exclusivity clauses "
             "4.3 Largest supplier accounts for 40% of spend")
    assert check(items, "The 2 contracts with exclusivity clauses account for 40% of spend.").verdict != SUPPORTED


def test_the_document_may_be_named_as_the_one_that_says_it() -> None:
    memo = Source(1, "Additional identified debt: $175,000 (capital lease obligations)", "Financial Adjustments Memo")
    result = verify("The Financial Adjustments Memo identified an additional $175,000 of capital lease "
                    "obligations [1].", [memo])
    assert result.supported, result.sentences[0].messages()


def test_what_a_report_concludes_is_what_is_checked() -> None:
    passage = "The audit covered 12 accounts. All accounts are valid, reconciled, and free of errors."
    assert check(passage, "The audit concluded that the accounts are free of errors.").verdict == SUPPORTED
    assert check(passage, "The audit concluded that the accounts are not free of errors.").verdict == CONTRADICTED


def test_of_two_clauses_naming_the_same_things_the_one_with_the_claims_verb_is_read() -> None:
    passage = "Parental leave is 18 weeks per child. It must be taken before the child's third birthday."
    assert check(passage, "Parental leave must not be taken before the child's third birthday.").verdict == CONTRADICTED
    assert check(passage, "Parental leave must be taken before the child's third birthday.").verdict == SUPPORTED


def test_a_name_that_opens_a_sentence_is_still_a_name() -> None:
    passage = "We express no opinion on tax matters. Very truly yours, Wilson & Partners LLP"
    assert check(passage, "Baker & Partners LLP expressed no opinion on tax matters.").verdict == UNSUPPORTED
    assert check(passage, "Wilson & Partners LLP expressed no opinion on tax matters.").verdict == SUPPORTED


def test_a_clipped_word_is_the_word_it_clips() -> None:
    passage = ("ack_delay_exponent (0x0a): The acknowledgment delay exponent is an integer value indicating an "
               "exponent used to decode the ACK Delay field in the ACK frame.")
    assert check(passage, "The acknowledgment delay exponent (ack_delay_exponent) decodes it.").verdict == SUPPORTED
