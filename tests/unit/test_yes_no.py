"""A yes/no question's "Yes" or "No", read from the passages and from the checked answer's sentences.

The sentences are made up for these tests; the parser, the verifier's alignment and the blocks are
the real ones.
"""

from __future__ import annotations

from rag_system.grounding.terms import is_yes_no
from rag_system.grounding.verifier import Source, answer_to, verify
from rag_system.grounding.yes_no import backing_only, sources_answer, sources_reading, unsettled_reply_dropped
from tests.unit.test_synthesis import block


def test_a_question_after_its_condition_still_asks_yes_or_no():
    assert is_yes_no("If the nightly build fails, is it retried?")
    assert is_yes_no("Once a ticket is closed, can it be reopened?")


def test_a_question_offering_alternatives_asks_which_not_whether():
    assert not is_yes_no("Can the tool export to CSV, or only to JSON?")
    assert not is_yes_no("Is the limit counted per user or rather per team?")
    assert is_yes_no("Is the cache enabled or not?")  # still whether
    assert is_yes_no("Can I pay by card or cheque?")


def test_a_denied_question_is_answered_no_though_its_condition_is_worded_otherwise():
    passage = "Unused vouchers may be carried into the next season. Vouchers lapse on 30 June and are not refunded on lapse."
    assert answer_to("If my unused vouchers lapse, are they refunded?", [Source(1, passage)]) == "no"


def test_a_condition_the_passage_words_otherwise_denies_nothing():
    passage = ("Parking is free for the first 2 hours of a single visit, and at half price for a further 3 hours. "
               "A parking permit is required once a stay exceeds 4 consecutive hours.")
    assert answer_to("Do I need a parking permit if I'm parked for a whole day?", [Source(1, passage)]) != "no"


def test_a_clause_that_is_a_condition_of_another_says_no_yes():
    # Seen in the web app over the sqlite3 reference: "Can I use a sqlite3 connection from another thread
    # by default?" got "Yes." from "... will be raised if the database connection is used by a thread other
    # than the one that created it": the question's words are all in the "if" clause, which states nothing.
    passage = ("share_session (bool) - If True (default), SessionError is raised if the session is opened by a "
               "worker other than the one that created it. If False, the session may be opened by several workers.")
    question = "Can I open a session from another worker by default?"
    assert answer_to(question, [Source(1, passage, "sessions.md")]) != "yes"
    assert answer_to("Is the session opened by a worker other than the one that created it?",
                     [Source(1, "A session is opened by a worker other than the one that created it.")]) == "yes"


def test_the_answer_sentence_settles_what_the_passage_words_otherwise():
    blocks = [block(1, "Archives stored on disk are encrypted with AES-256 by the backup tool. Archives on tape are "
                       "written in plain form without encryption.", name="backup.md")]
    question = "Does the backup tool encrypt archives stored on tape?"
    assert sources_answer(question, blocks) is None
    assert sources_answer(question, blocks, "The backup tool does not encrypt archives stored on tape [1].") == "no"


def test_no_reply_when_the_passage_and_the_answer_sentence_disagree():
    blocks = [block(1, "Staff may carry over up to five days of annual leave into the next year.", name="leave.md")]
    question = "Can staff carry over annual leave?"
    assert sources_answer(question, blocks) == "yes"
    assert sources_answer(question, blocks, "Annual leave cannot be carried over [1].") is None
    # and the question is not left to the model's judge: the passage and the answer settled it, apart
    assert sources_reading(question, blocks, "Annual leave cannot be carried over [1].") == (None, False)


def test_only_an_english_yes_no_question_the_rules_leave_unsettled_is_open_for_the_judge():
    blocks = [block(1, "Once a final size for a stream is known, it cannot change.", name="rfc.txt")]
    answer = "Once a final size for a stream is known, it cannot change [1]."
    assert sources_reading("Once a stream's final size is known, can the sender still change it?", blocks,
                           answer) == (None, True)
    assert sources_reading("What is a final size?", blocks, answer) == (None, False)  # not yes/no
    dutch = "Is de eindgrootte van een stroom daarna nog te wijzigen?"  # opens like English, is not
    assert is_yes_no(dutch) and sources_reading(dutch, blocks, answer) == (None, False)
    assert sources_reading("Can the final size change?", [], answer) == (None, False)  # nothing cited


def test_the_passage_and_the_answer_sentence_agreeing_on_no():
    blocks = [block(1, "The scheduler restarts a failed job on the same node up to 3 times. A failed job is never "
                       "moved to another node.", name="scheduler.md")]
    question = "Can the scheduler restart a failed job on another node?"
    assert sources_answer(question, blocks, "A failed job is never moved to another node [1].") == "no"


def test_a_question_offering_alternatives_gets_a_yes_for_its_first_and_never_a_no():
    question = "Can the tool export to CSV, or only to JSON?"
    both = [block(1, "The tool exports reports to CSV and to JSON.", name="export.md")]
    assert sources_answer(question, both, "The tool exports reports to CSV and to JSON [1].") == "yes"
    assert sources_reading(question, both) == ("yes", False)
    denied = [block(1, "The tool cannot export reports to CSV.", name="export.md")]
    assert answer_to(question, [Source(1, "The tool cannot export reports to CSV.")]) == "no"
    assert sources_reading(question, denied) == (None, False)  # "No" could deny either; not left to the judge


def test_everyday_phrases_are_read_in_the_documents_words():
    # neg_docs_07, neg_pydocs_04 and neg_atlas7_01 of the answer sets, in other words
    assert answer_to("Is the cache switched on out of the box?",
                     [Source(1, "The cache is switched on by default and holds 500 entries.")]) == "yes"
    assert answer_to("Does dict.pop() hand back the removed value?",
                     [Source(1, "It does not return the removed value; use popitem() for that.")]) == "no"
    assert answer_to("Is it fine to descale the Kestrel-3 once a month?",
                     [Source(1, "Descaling is recommended monthly.", "Kestrel-3 Kettle Manual")]) == "yes"


def test_a_word_of_the_source_title_counts_as_said_but_nothing_else_does():
    passage = "Descaling is recommended monthly."
    assert answer_to("Can I descale the Kestrel-3 monthly?", [Source(1, passage, "Kestrel-3 Kettle Manual")]) == "yes"
    assert answer_to("Can I descale the Kestrel-3 monthly?", [Source(1, passage, "Kettle Manual")]) is None
    assert answer_to("Can I descale the Kestrel-3 monthly?", [Source(1, passage, "Kestrel-4 Kettle Manual")]) is None


def test_a_breach_is_a_violation():
    passage = "The lease does not violate any term of the tenant's existing mortgage."
    assert answer_to("Does the lease breach the tenant's mortgage?", [Source(1, passage)]) == "no"


def _verdicts(text: str, passage: str, question: str) -> list[str]:
    return [s.verdict for s in verify(text, [Source(1, passage)], question=question).sentences]


def test_a_reply_that_says_nothing_else_stands_only_where_the_passage_settles_the_question():
    passage = ("Fortunately, there is Acme Reports, which has a completely redesigned template engine that avoids "
               "the old parser.\n\nAcme templates cannot contain statements because Acme's template parser can't "
               "handle statements nested inside expressions. However, this is not a serious problem.")
    question = "Can I put statements such as assignments inside an Acme template?"
    assert _verdicts("Yes, there is [1].", passage.split("\n\n")[0], question) == ["unsupported"]
    # the second paragraph settles it, though its first sentence holds more of the question's words
    assert _verdicts("Yes, there is [1].", passage, question) == ["contradicted"]


def test_a_bare_reply_the_passage_gives_is_supported():
    passage = "The nightly archive is compressed with zstd before it is copied to the backup host."
    assert _verdicts("Yes [1].", passage, "Is the nightly archive compressed?") == ["supported"]


def test_another_is_not_the_same():
    """'Another node' is what 'the same node' rules out: a reply of "yes" there would be the wrong way round."""
    passage = "The scheduler restarts a failed job on the same node."
    assert sources_answer("Can the scheduler restart a failed job on another node?", [block(1, passage)]) == "no"
    assert sources_answer("Can the scheduler restart a failed job on the same node?", [block(1, passage)]) == "yes"


def test_an_opposite_modifier_denies_only_what_it_is_said_of():
    # "same" is said of the month, "another" of the day off: nothing denied
    passage = "Staff who work on a bank holiday receive a replacement day off within the same month."
    assert answer_to("If I work on a bank holiday, do I get another day off?", [Source(1, passage)]) != "no"
    assert answer_to("Is the refund paid into another account?", [Source(1, "The refund is paid into the same account.")]) == "no"


ANN = "Does this project build an approximate-nearest-neighbour index?"
GUARD = block(1, "The project builds a full-text index on every table. The full-text index is guarded against "
                 "both the LanceDB default name text_idx and this project's older name fts_text, so a rebuild "
                 "does not raise.", name="architecture.md")


def test_a_model_reply_nothing_checks_is_dropped():
    assert sources_answer(ANN, [GUARD]) is None  # the passage says nothing about a vector index
    text = "No. The full-text index is guarded against both names, so a rebuild does not raise [1]."
    assert unsettled_reply_dropped(ANN, text, None) == text[4:]
    assert unsettled_reply_dropped(ANN, text, "no") == text  # the passages settle it: the verifier checks it
    assert unsettled_reply_dropped("Which index does it build?", text, None) == text  # not a yes/no question
    assert unsettled_reply_dropped(ANN, "Yes, there is [1].", None) == "Yes, there is [1]."  # bare: verifier's


def test_a_streamed_answer_never_shows_a_reply_nothing_checks():
    from tests.unit.test_synthesis import Scripted, run_with_data

    draft = "No. The full-text index is guarded against both names, so a rebuild does not raise [1]."
    answer, events = run_with_data(Scripted(draft), question=ANN, blocks=[GUARD])
    shown = "".join(d["text"] for e, d in events if e == "token")
    assert answer.answer_source == "llm"
    assert shown.startswith("The full-text index is guarded") and not answer.answer.startswith("No")


def test_a_clause_sharing_one_word_of_the_question_denies_nothing():
    question = "Is the reranker switched on out of the box?"
    # Tried in the web app over three localGPT design documents: the rules answered "No." from this.
    assert answer_to(question, [Source(1, "A reranker that fails to load logs a warning and is skipped \u2014 "
                                          "there is no fallback reranker.")]) is None
    assert answer_to(question, [Source(1, "The reranker is not switched on out of the box.")]) == "no"


def test_a_clause_forbidding_what_a_can_question_asks_answers_no():
    question = "Can I bring my dog to the office?"
    assert answer_to(question, [Source(1, "Dogs are not allowed in the office.")]) == "no"
    assert answer_to(question, [Source(1, "Dogs are forbidden in the office.")]) == "no"
    assert answer_to(question, [Source(1, "Smoking is not allowed in the office.")]) is None  # not what was asked
    assert answer_to("Do I bring my dog to the office?", [Source(1, "Dogs are forbidden in the office.")]) is None


def test_a_reply_keeps_the_quotes_that_give_it_and_their_blocks_context():
    question = "Does signing the lease breach the tenant's mortgage?"
    quotes = ("- We have acted as counsel to the tenant in connection with the lease. [1]\n"
              "- The lease does not violate any term of the tenant's existing mortgage. [2]\n"
              "- Tenant's counsel: Wilson & Partners LLP [3]\n"
              "- The mortgage is held by First Bank. [2]\n"
              "- The lease does not breach the tenant's mortgage. [4]")
    assert backing_only(question, quotes, "no").split("\n") == [
        "- The lease does not violate any term of the tenant's existing mortgage. [2]",
        "- The mortgage is held by First Bank. [2]",
        "- The lease does not breach the tenant's mortgage. [4]"]
    assert backing_only(question, quotes, None) == quotes
    assert backing_only(question, quotes, "yes") == quotes  # no item says yes: the list stays whole
    assert backing_only(question, "The lease does not violate it. [1]", "no") == "The lease does not violate it. [1]"


def test_what_a_light_verb_has_is_what_it_says():
    # "do not have any ... protection" says "are not protected"; "Note that" frames the clause
    passage = "Note that heartbeat probes do not have any cryptographic protection."
    assert answer_to("Are heartbeat probes cryptographically protected?", [Source(1, passage)]) == "no"


def test_initials_and_spellings_the_documents_use_are_read_as_the_question_s_words():
    certificate = "LITIGATION No IP-related litigation is pending or threatened."
    assert answer_to("Is the vendor being sued over its intellectual property?", [Source(1, certificate)]) == "no"
    nda = "Nothing in this NDA grants any licence to intellectual property of either party."
    assert answer_to("Does the NDA give the buyer a license to the seller's IP?", [Source(1, nda)]) == "no"
    review = "Licence compliance verified - no copyleft contamination issues identified."
    assert answer_to("Did the review find copyleft contamination issues?", [Source(1, review)]) == "no"


def test_a_denial_answers_though_another_clause_holds_more_of_the_question():
    """The letter's opening names the auditor and the merger; the clause that answers is the one that
    says the merger violates nothing (the acquisition set's legal opinion, found in the web app)."""
    sources = [Source(1, "We have acted as auditor to Acme Corp in connection with the proposed merger with Globex."),
               Source(2, "The merger does not violate any provision of the Company's bylaws or any material contract.")]
    assert answer_to("Did the auditor find that the merger breaches Acme's bylaws?", sources) == "no"
    assert answer_to("Did the auditor find that the merger breaches Acme's bylaws?", sources[:1]) is None


def test_a_denial_shares_words_with_the_question_as_a_whole():
    """"NDA"-like words of the question's other clause ("signing the agreement", the means of giving)
    count with the asked clause's own ("IP") toward the two a denial must share."""
    question = "Does signing the agreement give Globex a licence to Acme's trademarks and other IP?"
    owns = Source(1, "Acme owns 4 registered trademarks as listed in the IP schedule.")
    nothing = Source(2, "Nothing in this agreement grants any rights to intellectual property.", "agreement.pdf",
                     "5. No licence")
    assert answer_to(question, [owns, nothing]) == "no"
    assert answer_to(question, [owns]) is None
