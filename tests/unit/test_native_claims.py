"""``docent_native.check_claims`` must equal its Python reference exactly.

Why: the claim check decides whether a model answer is shown or replaced, so
the native code and the readable reference must agree on every ``str``.
Hypothesis builds texts from the fragments the rules care about (numerals,
groupings, scales, currencies, months, ordinals, identifiers, backticks,
quotes, negators and contractions, list markers, hyphenation) plus arbitrary
Unicode, and also realistic answers: sentences cut from the blocks themselves,
cited, with numbers, names and polarity changed. The example tests pin the
documented contract, including the cases of issue 18.
"""

from __future__ import annotations

import re
import threading

import docent_native
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from testkit.native_reference_claims import check_claims_reference

FRAGMENTS = [
    "0", "3", "12", "45", "415", "2024", "2026", "5432", ",", ".", "-", "/", "%", "$", "€", "£", "USD ",
    "000", ",000", ".000", " 000", "\u00a0000", "\u202f000", ".5", ",5", "k", "K", "M", "m", "bn", "B",
    " million", " Million", " thousand", " billion", " hundred", " percent", " per cent", "st", "th", "nd",
    "January", "Feb", "Feb.", "May", "sept", "Sept", "October", " 1,", " 1st", "31", "32", "13", "-02", "-01",
    "v1.2.3", "TLS1.3", "0x0a", "0x", "0X", "0xff", "0x00", "0x3f9z", "0x1.2", "ffff", "ack_delay_exponent", "SETTINGS_MAX", "_", "TechCorp", "iPhone", "e.g.",
    "os.path", "`", "``", '"', "“", "”", "'", "’", "n't", "doesn't", "can’t", "not", "No,", "Yes,", "never",
    "no more than", "only", "if", "Northwind", "Northwind's", "James", "Mitchell", "CEO", "QUIC", "MUST",
    "NOT", "The", "the", "handles", "handle", "type", "types", "REAL", "allowed", "default", "is", "a",
    " ", "  ", "\n", "\n\n", "\n- ", "\n* ", "\n1. ", "\n(a) ", "\na) ", "\t", ": ", "(", ")", "[", "]",
    "[1]", "[2]", "[1, 2]", "[2-3]", "[9]", "[0]", "\u00ad", "-\n", "trans-\nport", "İ", "Σ", "ß", "٣",
    "²", "Ⅻ", "é", "É", "twenty", "-five", "five", "thirty (30)", "twice", "dozen",
    "p. ", "pp.", "P.", "Content-Length", "TS-71", " - ", "&", "'s", "’s", ";", "because", "when", "except",
    "which", "but", "Hooli's", "Meridian Coffee", "MUST NOT", "no fault", "nowhere", "e.g. ", "isn't",
]
TEXT = st.one_of(
    st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=2)), max_size=50).map("".join),
    st.text(max_size=60),
)
BLOCKS = st.lists(TEXT, max_size=4)


def assert_same(answer: str, blocks: list[str], min_quote_chars: int = 12) -> list[dict]:
    native = docent_native.check_claims(answer, blocks, min_quote_chars)
    reference = check_claims_reference(answer, blocks, min_quote_chars)
    assert native == reference
    return native


@settings(max_examples=1500, deadline=None)
@given(answer=TEXT, blocks=BLOCKS, min_quote_chars=st.integers(min_value=1, max_value=20))
def test_check_claims_matches_reference(answer: str, blocks: list[str], min_quote_chars: int) -> None:
    native = assert_same(answer, blocks, min_quote_chars)
    spans = [(s, e) for s, e, _ in docent_native.parse_citations(answer)]
    assert [(r["start"], r["end"]) for r in native] == spans
    for index, report in enumerate(native):
        assert list(report) == ["sentence", "start", "end", "blocks", "facts", "polarity", "supported"]
        assert report["sentence"] == index
        for fact in report["facts"]:
            assert list(fact) == ["kind", "text", "start", "end", "found", "cited"]
            assert report["start"] <= fact["start"] < fact["end"] <= report["end"]
            assert fact["text"] == answer[fact["start"] : fact["end"]]
            assert set(fact["cited"]) <= set(report["blocks"])
            # Only a name may be found outside the cited blocks (in another block).
            assert fact["found"] == bool(fact["cited"]) or (fact["kind"] == "name" and fact["found"])
        if not report["blocks"]:
            assert report["facts"] == [] and report["polarity"] is None and report["supported"]


# Realistic answers: sentences of the blocks, re-cased, cited and altered.
BLOCK_SENTENCES = [
    "If this parameter is absent, a default value of 3 is assumed (indicating a multiplier of 8).",
    "The purchase price means $45,000,000 USD as detailed in Exhibit A.",
    "This version doesn't handle the REAL type.",
    "An endpoint MUST NOT send a PING frame in this state.",
    "Employees may carry over no more than 5 days of annual leave to the next year.",
    "The Agreement was entered into as of October 1, 2024 between TechCorp Inc. and StartupXYZ.",
    "Set `max_idle_timeout` to 30 seconds; the ack_delay_exponent is limited to 20.",
    "Northwind pays out unused leave only on termination.",
    "QUIC version 1 uses TLS1.3, as specified on 2021-05-27.",
    "Twenty-five percent (25%) of the fee is held in escrow for eighteen months.",
]
EDITS = [
    ("3", "4"), ("45,000,000", "45 million"), ("$45,000,000", "$46M"), ("doesn't", "does"), ("MUST NOT", "MUST"),
    ("no more than", "up to"), ("October 1, 2024", "1 October 2024"), ("TechCorp", "Contoso"), ("20", "2O"),
    ("unused", "Unused"), ("2021-05-27", "May 2021"), ("25%", "25 percent"), ("Northwind", "Southwind"),
]


@st.composite
def realistic(draw: st.DrawFn) -> tuple[str, list[str]]:
    blocks = draw(st.lists(st.lists(st.sampled_from(BLOCK_SENTENCES), min_size=1, max_size=3).map(" ".join),
                           min_size=1, max_size=3))
    sentences = []
    for _ in range(draw(st.integers(1, 4))):
        sentence = draw(st.sampled_from(BLOCK_SENTENCES)).rstrip(".")
        for old, new in draw(st.lists(st.sampled_from(EDITS), max_size=2)):
            sentence = sentence.replace(old, new)
        if draw(st.booleans()):
            sentence = draw(st.sampled_from(["Yes, ", "No, ", "- ", "1. ", "Note: "])) + sentence
        marker = draw(st.sampled_from(["[1]", "[2]", "[1, 3]", "[4]", "", "[2-3]"]))
        sentences.append(draw(st.sampled_from([f"{sentence} {marker}.", f"{sentence}. {marker}"])))
    return draw(st.sampled_from([" ", "\n", "\n\n"])).join(sentences), blocks


@settings(max_examples=800, deadline=None)
@given(case=realistic())
def test_realistic_answers_match_reference(case: tuple[str, list[str]]) -> None:
    answer, blocks = case
    assert_same(answer, blocks)


@settings(max_examples=200, deadline=None)
@given(data=st.data(), block=st.sampled_from(BLOCK_SENTENCES))
def test_a_block_sentence_cited_to_itself_is_supported(data: st.DataObject, block: str) -> None:
    """Quoting a cited block back, re-spaced, is never flagged (precision)."""
    answer = " ".join(block.split()) + " [1]"
    report = assert_same(answer, [block])
    assert all(r["supported"] for r in report), report


# --- Documented contract -------------------------------------------------------


def only(answer: str, blocks: list[str]) -> dict:
    reports = [r for r in assert_same(answer, blocks) if r["blocks"]]
    assert len(reports) == 1
    return reports[0]


def facts(answer: str, blocks: list[str]) -> list[tuple[str, str, bool]]:
    return [(f["kind"], f["text"], f["found"]) for f in only(answer, blocks)["facts"]]


def test_issue_18_cases() -> None:
    r = only("Yes, libtasn1 handles the REAL type [1].", ["libtasn1: This version doesn't handle the REAL type."])
    assert r["polarity"] == {"answer_negated": False, "evidence_negated": True, "agrees": False, "block": 1,
                             "start": 0, "end": 52}
    assert r["supported"] is False
    assert only("The endpoint MUST NOT send it [1].", ["An endpoint MUST NOT send a PING frame."])["supported"]
    nda = "IN WITNESS WHEREOF, the parties have executed this Agreement. TechCorp Inc. By: Name: Title: CEO"
    assert ("number", "$415,550", False) in facts(
        "The annual salary of TechCorp's CEO James Mitchell is $415,550. [1]", [nda])
    rfc = "If this parameter is absent, a default value of 3 is assumed (indicating a multiplier of 8)."
    assert only("A default of 3 is assumed [1].", [rfc])["supported"]
    assert facts("It is 5432 [1].", ["The stream ID's two least significant bits identify the initiator."]) == [
        ("number", "5432", False)]
    r = only("The fee is $45 million [1].", ["a fee of USD 45,000,000"])
    assert r["supported"] and r["facts"][0]["cited"] == [1]


def test_numbers_are_canonicalised() -> None:
    block = "Fees: USD 45,000,000; 1.5 billion; 12 per cent; 3 000 units; 45.000.000 EUR; twenty-five days; thirty (30)"
    for claim in ["$45M", "45 million", "€45,000,000", "1,500,000,000", "$1.5bn", "12%", "12 percent", "12 Per cent", "3,000",
                  "45000000", "25", "30"]:
        assert facts(f"It is {claim} [1].", [block]) == [("number", claim, True)], claim
    for claim in ["46 million", "1.6 billion", "13%", "3,001"]:
        assert facts(f"It is {claim} [1].", [block]) == [("number", claim, False)], claim
    # A number word in the answer is not a fact; one in a block is a value.
    assert facts("One of the parties signed [1].", ["The parties signed"]) == []


def test_a_hex_literal_is_its_value_not_the_numeral_zero() -> None:
    """RFC 9297's DATAGRAM capsule is type 0x00; an RFC's 0xff mask is not a 0 (the false pass of rfc_q23)."""
    assert facts("The port is 0 [1].", ["The mask 0xff applies to 0x41 and 0x3f9z."]) == [("number", "0", False)]
    assert facts("The DATAGRAM capsule type is 0 [1].", ["DATAGRAM Capsule { Type (i) = 0x00 }"]) == [
        ("name", "DATAGRAM", True), ("number", "0", True)]
    assert facts("The mask is 0xFF, or 255 [1].", ["mask 0xff"]) == [("number", "0xFF", True), ("number", "255", True)]
    assert facts("Its id is 0x3f9z [1].", ["id 0x3f9z"]) == [("identifier", "0x3f9z", True)]
    salt = "0x" + "38762cf7f55934b34d179ae6a4c80cadccbb7f0a"
    assert facts(f"The salt is {salt[:-4]} [1].", [f"salt = {salt}"]) == [("identifier", salt[:-4], False)]


def test_dates_and_their_parts() -> None:
    block = "This Agreement is entered into as of October 1, 2024."
    for claim in ["October 1, 2024", "1 October 2024", "2024-10-01", "Oct 2024", "1st October, 2024"]:
        assert facts(f"It was signed on {claim} [1].", [block]) == [("date", claim, True)], claim
    assert facts("It was signed on 2 October 2024 [1].", [block]) == [("date", "2 October 2024", False)]
    assert facts("It was signed in 2024 [1].", [block]) == [("number", "2024", True)]
    # "Oct. 2024" ends a sentence at "Oct." in an answer (the splitter's rule), not in a block.
    assert facts("It was signed in October 2024 [1].", ["Signed in Oct. 2024."]) == [("date", "October 2024", True)]


def test_identifiers_names_code_and_quotes() -> None:
    block = "northwind_leave_policy.pdf, p. 2\nThe ack_delay_exponent of RFC 9000 uses `max_ack_delay` in v1.2.3."
    assert facts('Per Northwind, ACK_DELAY_EXPONENT and `max_ack_delay` from "RFC 9000" in v1.2.3 [1].', [block]) == [
        ("name", "Northwind", True), ("identifier", "ACK_DELAY_EXPONENT", True), ("code", "max_ack_delay", True),
        ("quote", "RFC 9000", True), ("identifier", "v1.2.3", True)]
    # Sentence starts, colons, list markers and excluded words are not names.
    assert facts("- Note: The Section says Yes in May [1].", ["nothing"]) == []
    # Possessives are stripped by the word boundary; long quotes are left to validate_citations.
    assert facts('It is TechCorp\'s "very long quoted text" [1].', ["techcorp"]) == [("name", "TechCorp", True)]


def test_unchecked_sentences_and_errors() -> None:
    reports = assert_same("No citation at 99. Unknown [5]. Known [1].", ["Known"])
    assert [r["blocks"] for r in reports] == [[], [], [1]]
    assert [r["supported"] for r in reports] == [True, True, True]
    for bad in (0, -1):
        with pytest.raises(ValueError, match=f"^{re.escape('min_quote_chars must be >= 1')}$"):
            docent_native.check_claims("x", [], bad)
        with pytest.raises(ValueError, match="^min_quote_chars must be >= 1$"):
            check_claims_reference("x", [], bad)
    with pytest.raises(TypeError):
        docent_native.check_claims("x", "block")
    with pytest.raises(TypeError):
        check_claims_reference("x", "block")
    with pytest.raises(TypeError):
        docent_native.check_claims("x", ["a", 1])  # type: ignore[list-item]


def test_large_inputs_release_the_gil_and_agree() -> None:
    answer = " ".join(f"Block {i % 9 + 1} says {i} and v{i}.{i} [{i % 9 + 1}]." for i in range(400))
    blocks = [f"This is block {i}: " + " ".join(f"{j} v{j}.{j}" for j in range(i, 400, 9)) for i in range(1, 10)]
    expected = check_claims_reference(answer, blocks)
    results: list[object] = []
    threads = [threading.Thread(target=lambda: results.append(docent_native.check_claims(answer, blocks)))
               for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [expected] * 4
