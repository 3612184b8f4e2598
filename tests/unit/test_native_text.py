"""``split_sentences``, ``parse_citations`` and ``validate_citations`` must
equal their Python references exactly.

Why: citation checking decides whether an answer is shown as grounded, so the
native and reference implementations must agree on every ``str``. Hypothesis
builds texts from the fragments the rules care about (terminal punctuation,
quotes, abbreviations, list markers, headings, valid and invalid citation
markers, exotic whitespace and case) plus arbitrary Unicode; exhaustive tests
hold the native character classes to Python's own over all code points; the
example tests pin the documented contract.
"""

from __future__ import annotations

import re
import sys
import threading
import unicodedata

import docent_native
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from testkit.native_reference import (
    parse_citations_reference,
    split_sentences_reference,
    validate_citations_reference,
)

FRAGMENTS = [
    "Dr.", "e.g.", "etc.", "J.", "A", "a", "word", "Élan", "ß", "x", "Fig.", "approx.", "ok", "The",
    ".", "!", "?", "…", "...", '"', "'", "”", "’", ")", "]", "“", "‘", "(", "[", "#",
    " ", "  ", "\n", "\n\n", " \n \n", "\n- ", "\n* ", "\n1. ", "\n12.", "\n# ", "\t", "\u00a0", "\x1c",
    "[1]", "[1, 2]", "[2,3]", "[2-4]", "[3–5]", "[3-1]", "[0]", "[1-60]", "[12345]", "[9999]", "[1 ]",
    "İ", "Σ", "1", "42", "\u0301", "\u093e", "Ⓐ", "_", "quoted text of some length",
]
TEXT = st.one_of(
    st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=2)), max_size=40).map("".join),
    st.text(max_size=60),
)
BLOCKS = st.lists(TEXT, max_size=5)

ALL_CODE_POINTS = [chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF]
CHUNK = 8192


def is_word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


@settings(max_examples=600, deadline=None)
@given(text=TEXT)
def test_split_matches_reference_and_covers_text(text: str) -> None:
    spans = docent_native.split_sentences(text)
    assert spans == split_sentences_reference(text)
    assert all(type(s) is int and type(e) is int for s, e in spans)
    previous = 0
    for start, end in spans:
        assert previous <= start < end
        assert not text[start].isspace() and not text[end - 1].isspace()
        assert text[previous:start].strip() == ""  # only whitespace between sentences
        previous = end
    assert text[previous:].strip() == ""


@settings(max_examples=400, deadline=None)
@given(text=TEXT)
def test_parse_citations_matches_reference(text: str) -> None:
    parsed = docent_native.parse_citations(text)
    assert parsed == parse_citations_reference(text)
    assert [(s, e) for s, e, _ in parsed] == docent_native.split_sentences(text)
    for _, _, cited in parsed:
        assert len(cited) == len(set(cited)) and all(1 <= n <= 9999 for n in cited)


@settings(max_examples=400, deadline=None)
@given(answer=TEXT, blocks=BLOCKS, min_quote_chars=st.integers(min_value=1, max_value=20))
def test_validate_matches_reference(answer: str, blocks: list[str], min_quote_chars: int) -> None:
    native = docent_native.validate_citations(answer, blocks, min_quote_chars)
    reference = validate_citations_reference(answer, blocks, min_quote_chars)
    assert native == reference
    assert list(native) == ["sentences", "unknown", "uncited", "bad_quotes", "valid"]
    assert all(list(s) == ["start", "end", "citations"] for s in native["sentences"])


@settings(max_examples=200, deadline=None)
@given(data=st.data(), blocks=st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=4).map(" ".join))
def test_validate_quotes_taken_from_blocks(data: st.DataObject, blocks: str) -> None:
    """Quoting a (re-cased, re-spaced) slice of a cited block is never bad."""
    start = data.draw(st.integers(0, len(blocks)))
    quote = blocks[start : data.draw(st.integers(start, len(blocks)))]
    quote = " ".join(quote.split()).upper()
    answer = f'It says “{quote}” [1].'
    native = docent_native.validate_citations(answer, [blocks], 1)
    assert native == validate_citations_reference(answer, [blocks], 1)


# --- Exhaustive character classes -----------------------------------------


def test_word_class_equals_python_w_on_every_code_point() -> None:
    """Rust's word table must equal ``\\w``; regenerate it with
    ``native/tools/gen_word_table.py`` when Python's Unicode version changes."""
    for i in range(0, len(ALL_CODE_POINTS), CHUNK):
        chunk = ALL_CODE_POINTS[i : i + CHUNK]
        answer = "\n\n".join(f"zz{c}zz" for c in chunk)  # one word iff c is \w
        uncited = docent_native.validate_citations(answer, [])["uncited"]
        mismatched = set(uncited) ^ {j for j, c in enumerate(chunk) if not is_word(c)}
        assert not mismatched, (
            f"word class differs from Python {unicodedata.unidata_version} for "
            f"{[hex(ord(chunk[j])) for j in sorted(mismatched)][:10]}; run native/tools/gen_word_table.py"
        )


def test_sentence_start_and_initials_equal_python_on_every_code_point() -> None:
    for i in range(0, len(ALL_CODE_POINTS), CHUNK):
        chunk = ALL_CODE_POINTS[i : i + CHUNK]
        expected = []
        offset = 0
        for c in chunk:
            # "Zz. <c>zz" splits iff c starts a sentence; "Zz <c>. Zz" is kept
            # whole iff c is a single letter (an initial).
            if c in "0123456789[" or (c.isupper() and c.isalnum()):
                expected += [(offset, offset + 3), (offset + 4, offset + 7)]
            else:
                expected.append((offset, offset + 7))
            offset += 9
            if c.isalpha():
                expected.append((offset, offset + 8))
            else:
                expected += [(offset, offset + 5), (offset + 6, offset + 8)]
            offset += 10
        text = "\n\n".join(f"Zz. {c}zz\n\nZz {c}. Zz" for c in chunk)
        assert docent_native.split_sentences(text) == expected


def test_case_fold_equals_python_lower_on_every_word_character() -> None:
    """Only word characters are folded (the word test covers the rest)."""
    word_chars = [c for c in ALL_CODE_POINTS if is_word(c)]
    for i in range(0, len(word_chars), CHUNK):
        chunk = word_chars[i : i + CHUNK]
        answer = "\n\n".join(f'Zz "aaaaaaaaaaa{c}b" [{j + 1}].' for j, c in enumerate(chunk))
        blocks = [f"AAAAAAAAAAA{c.upper()}B" for c in chunk]
        bad = docent_native.validate_citations(answer, blocks)["bad_quotes"]
        expected = validate_citations_reference(answer, blocks)["bad_quotes"]
        assert bad == expected


# --- Documented contract ---------------------------------------------------


def sentences(text: str) -> list[str]:
    return [text[s:e] for s, e in docent_native.split_sentences(text)]


def test_split_examples() -> None:
    assert sentences("One two. Three four! Five six? Seven") == ["One two.", "Three four!", "Five six?", "Seven"]
    text = "See e.g. Section 4.2 of the spec. Dr. Smith agreed. J. R. Doe wrote it. Version 1.5 works."
    assert sentences(text) == [
        "See e.g. Section 4.2 of the spec.", "Dr. Smith agreed.", "J. R. Doe wrote it.", "Version 1.5 works."]
    assert sentences("It costs approx. ten euros. next line") == ["It costs approx. ten euros. next line"]
    assert sentences('He said "stop." Then left. (Really.) Yes.') == ['He said "stop."', "Then left.", "(Really.)", "Yes."]
    assert sentences("Bonjour. Élan. «Non».") == ["Bonjour.", "Élan. «Non»."]


def test_split_line_rules() -> None:
    assert sentences("Intro:\n- one\n* two\n  3. three\nnot a list") == [
        "Intro:", "- one", "* two", "3. three\nnot a list"]
    assert sentences("para one\n \npara two") == ["para one", "para two"]
    assert sentences("## Results\nThe dose is 5 mg.") == ["## Results", "The dose is 5 mg."]


def test_split_keeps_trailing_citation_markers() -> None:
    assert sentences("It is red. [1] Next one.") == ["It is red. [1]", "Next one."]
    assert sentences("Red. [1, 2] [3-4] next.") == ["Red. [1, 2] [3-4]", "next."]
    assert sentences("Red. [1]") == ["Red. [1]"]
    assert sentences("Red.\n[1] Next.") == ["Red.", "[1] Next."]  # new line: not trailing
    assert sentences("Red. [note] Next.") == ["Red.", "[note] Next."]  # not a citation


def test_split_offsets_are_str_indexes() -> None:
    text = "😀 Über. Ça va? Oui."
    spans = docent_native.split_sentences(text)
    assert spans == [(0, 7), (8, 14), (15, 19)]
    assert [text[s:e] for s, e in spans] == ["😀 Über.", "Ça va?", "Oui."]
    assert docent_native.split_sentences("") == [] and docent_native.split_sentences(" \n\t") == []


def test_parse_citations_marker_grammar() -> None:
    text = "A [1] b [2, 1] c [3-5] d [6–7]. B [0] [01] [1-51] [5-3] [10000] [x] [ 1] [1 ,9]."
    assert docent_native.parse_citations(text) == [(0, 31, [1, 2, 3, 4, 5, 6, 7]), (32, len(text), [1, 9])]


def test_validate_example() -> None:
    blocks = ["The Eiffel Tower is 330 metres tall.", "It was completed in 1889 for the World's Fair."]
    answer = (
        "# Answer\n"
        'The tower is "330 METRES   tall" [1]. It opened in 1889 [2][2]. Also, [7]. '
        "It is in Paris. Yes. It was built “for the Olympic Games” [2]."
    )
    result = docent_native.validate_citations(answer, blocks)
    assert result == validate_citations_reference(answer, blocks)
    assert [s["citations"] for s in result["sentences"]] == [[], [1], [2], [7], [], [], [2]]
    assert result["unknown"] == [7]
    assert result["uncited"] == [4]  # "# Answer" is a heading, "Yes." has one word
    assert result["bad_quotes"] == [{"sentence": 6, "quote": "for the Olympic Games"}]
    assert result["valid"] is False
    assert docent_native.validate_citations("Fine [1]. Good too [2].", blocks)["valid"] is True
    assert docent_native.validate_citations("", blocks)["valid"] is False  # nothing cited


def test_validate_errors() -> None:
    for bad in (0, -1):
        with pytest.raises(ValueError, match=f"^{re.escape('min_quote_chars must be >= 1')}$"):
            docent_native.validate_citations("x", [], bad)
        with pytest.raises(ValueError, match="^min_quote_chars must be >= 1$"):
            validate_citations_reference("x", [], bad)
    with pytest.raises(TypeError):
        docent_native.validate_citations("x", "block")  # a str is not a list of blocks
    with pytest.raises(TypeError):
        docent_native.validate_citations("x", ["a", 1])  # type: ignore[list-item]


def test_large_inputs_release_the_gil_and_agree() -> None:
    text = " ".join(f"Sentence {i} cites [{i % 9 + 1}]. It quotes \"block {i % 9} text\"." for i in range(3000))
    blocks = [f"This is block {i} text." for i in range(9)]
    expected = validate_citations_reference(text, blocks)
    results: list[object] = []
    threads = [
        threading.Thread(target=lambda: results.append(docent_native.validate_citations(text, blocks)))
        for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [expected] * 4
