"""``evidence_contrast`` and ``select_evidence_sentences`` must equal their
Python references bit for bit.

Why: the evidence score gates "not enough evidence" answers and the selected
sentences become extractive answers, so both must be reproducible. Hypothesis
feeds both sides arbitrary finite floats (ties, signed zeros, huge and tiny
magnitudes) and random texts and queries, and demands identical results and
float bits; example tests pin the formula, the floor and the tie-breaks.
Query terms and sentence words are compared by ``common.lexicon.stem`` (ported
to native/src/lexicon.rs), so further tests pin that the Rust stemmer splits
words into exactly the Python stemmer's classes.
"""

from __future__ import annotations

import math
import re

import docent_native
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from common.lexicon import STOP_WORDS, SUFFIXES, stem
from testkit.native_reference import evidence_contrast_reference, select_evidence_sentences_reference

FINITE = st.floats(allow_nan=False, allow_infinity=False)
SIMILARITY = st.one_of(
    st.sampled_from([0.0, -0.0, 0.5, 0.8, 0.80000001, 1.0, -1.0]),
    st.floats(min_value=-1.0, max_value=1.0),
    FINITE,
)

WORDS = ["aspirin", "Aspirin", "DOSAGE", "dosage", "adults", "the", "what", "is", "of", "mg", "500",
         "Élan", "straße", "ΣΟΦΙΑ", "σοφια", "İstanbul", "x_y", "ab", "abc", "co2",
         "adult", "Dosages", "dosing", "weekly", "week", "Backflushing", "backflush", "validations",
         "studies", "tied", "ééed", "éééed", "İİed", "ΣΟΦΙΕΣ", "ties", "ations", "tree"]
SEPARATORS = [" ", " ", "  ", ", ", ". ", "! ", "? ", "\n", "\n\n", " [1] ", " (", ") ", '"', "\n- ", "; "]
TEXT = st.one_of(
    st.lists(st.one_of(st.sampled_from(WORDS), st.sampled_from(SEPARATORS)), max_size=60).map("".join),
    st.text(max_size=40),
)
QUERY = st.one_of(
    st.lists(st.sampled_from(WORDS), max_size=6).map(" ".join),
    st.text(max_size=20),
)


def assert_same_selection(native: list[tuple[int, int, int, float]], reference: list[tuple[int, int, int, float]]) -> None:
    assert [e[:3] for e in native] == [e[:3] for e in reference]
    assert [e[3].hex() for e in native] == [e[3].hex() for e in reference]
    assert all(type(e[3]) is float for e in native)


@settings(max_examples=500, deadline=None)
@given(values=st.lists(SIMILARITY, max_size=60))
def test_contrast_matches_reference_bits(values: list[float]) -> None:
    native = docent_native.evidence_contrast(values)
    assert type(native) is float
    assert native.hex() == evidence_contrast_reference(values).hex()


@settings(max_examples=200, deadline=None)
@given(values=st.lists(st.one_of(SIMILARITY, st.sampled_from([math.nan, math.inf, -math.inf])), max_size=8))
def test_contrast_same_outcome_with_non_finite(values: list[float]) -> None:
    try:
        expected: str = evidence_contrast_reference(values).hex()
    except ValueError as exc:
        expected = f"ValueError: {exc}"
    try:
        got: str = docent_native.evidence_contrast(values).hex()
    except ValueError as exc:
        got = f"ValueError: {exc}"
    assert got == expected


@settings(max_examples=200, deadline=None)
@given(values=st.lists(st.floats(min_value=0.0, max_value=1.0), min_size=2, max_size=40), data=st.data())
def test_contrast_ignores_input_order(values: list[float], data: st.DataObject) -> None:
    shuffled = data.draw(st.permutations(values))
    assert docent_native.evidence_contrast(shuffled).hex() == docent_native.evidence_contrast(values).hex()


@settings(max_examples=400, deadline=None)
@given(
    query=QUERY,
    blocks=st.lists(TEXT, max_size=6),
    max_sentences=st.integers(min_value=0, max_value=8),
    min_overlap=st.one_of(st.sampled_from([0.0, 0.2, 0.5, 1.0, 1.5, -1.0]), st.floats(allow_nan=False)),
)
def test_selection_matches_reference(
    query: str, blocks: list[str], max_sentences: int, min_overlap: float
) -> None:
    native = docent_native.select_evidence_sentences(query, blocks, max_sentences, min_overlap)
    assert_same_selection(native, select_evidence_sentences_reference(query, blocks, max_sentences, min_overlap))
    assert len(native) <= max_sentences
    for block, start, end, _ in native:
        assert docent_native.split_sentences(blocks[block]).count((start, end)) == 1


def test_contrast_formula_and_floor() -> None:
    values = [0.5, 0.9, 0.7, 0.6]
    mean = (0.0 + 0.7 + 0.6 + 0.5) / 3
    std = math.sqrt((0.0 + (0.7 - mean) * (0.7 - mean) + (0.6 - mean) * (0.6 - mean) + (0.5 - mean) * (0.5 - mean)) / 3)
    assert docent_native.evidence_contrast(values) == (0.9 - mean) / std
    # A flat background would divide by ~0; the floor of 0.01 applies instead.
    assert docent_native.evidence_contrast([0.85, 0.8, 0.8]) == (0.85 - 0.8) / 0.01
    assert docent_native.evidence_contrast([0.3, 0.3]) == 0.0
    assert docent_native.evidence_contrast([]) == 0.0
    assert docent_native.evidence_contrast([0.7]) == 0.0
    assert docent_native.evidence_contrast((1, 0)) == 100.0  # ints and tuples accepted


@pytest.mark.parametrize("values", [[math.nan], [0.1, math.nan], [0.2, math.inf], [-math.inf, 0.0]])
def test_contrast_rejects_non_finite(values: list[float]) -> None:
    for func in (docent_native.evidence_contrast, evidence_contrast_reference):
        with pytest.raises(ValueError, match="^similarities must be finite$"):
            func(values)


def test_contrast_large_input() -> None:
    values = [((i * 7919) % 10007) / 10007 for i in range(10_000)]
    assert docent_native.evidence_contrast(values).hex() == evidence_contrast_reference(values).hex()


BLOCKS = [
    "Aspirin dosage for adults is 500 mg. Short one. Unrelated text about cats here.",
    "The usual ASPIRIN dosage for adults varies a lot. Aspirin helps.",
    "Children should not take aspirin at all, says the guide.",
]


def test_selection_example() -> None:
    got = docent_native.select_evidence_sentences("What is the aspirin dosage for adults?", BLOCKS)
    assert got == select_evidence_sentences_reference("What is the aspirin dosage for adults?", BLOCKS)
    # Terms: aspirin, dosage, adults ("what", "the", "for" are stop words; "is" is short).
    assert got == [(0, 0, 36, 1.0 + 0.001 * (1 / 1)), (1, 0, 49, 1.0 + 0.001 * (1 / 2)),
                   (2, 0, 56, 1 / 3 + 0.001 * (1 / 3))]
    assert [BLOCKS[b][s:e] for b, s, e, _ in got][1] == "The usual ASPIRIN dosage for adults varies a lot."
    assert docent_native.select_evidence_sentences("aspirin dosage adults", BLOCKS, 1) == got[:1]
    assert docent_native.select_evidence_sentences("aspirin dosage adults", BLOCKS, 3, 0.5) == got[:2]


def test_selection_edge_cases() -> None:
    assert docent_native.select_evidence_sentences("the of is it", BLOCKS) == []  # no terms
    assert docent_native.select_evidence_sentences("", BLOCKS) == []
    assert docent_native.select_evidence_sentences("aspirin", []) == []
    assert docent_native.select_evidence_sentences("aspirin", BLOCKS, 0) == []
    assert docent_native.select_evidence_sentences("aspirin", BLOCKS, 3, math.nan) == []
    # "Aspirin helps." has only two words and is never selected.
    assert all(s != 50 for b, s, _, _ in docent_native.select_evidence_sentences("aspirin", BLOCKS, 10, 0.0) if b == 1)
    # Equal overlap: the earlier block wins through the rank bonus.
    tied = docent_native.select_evidence_sentences("zebra", ["A zebra is here.", "A zebra is here."])
    assert [b for b, *_ in tied] == [0, 1]


def test_selection_errors() -> None:
    for func in (docent_native.select_evidence_sentences, select_evidence_sentences_reference):
        with pytest.raises(ValueError, match=f"^{re.escape('max_sentences must be >= 0')}$"):
            func("aspirin", BLOCKS, -1)
        with pytest.raises(TypeError):
            func("aspirin", "a block")  # a str is not a list of blocks
    with pytest.raises(TypeError):
        docent_native.select_evidence_sentences("aspirin", ["ok", None])  # type: ignore[list-item]


def test_selection_matches_stems() -> None:
    blocks = [
        "Descale the Atlas-7 every month with the supplied descaler.",
        "Backflushing with Cafiza detergent is recommended weekly.",
    ]
    query = "Is it fine to backflush the Atlas-7 once a week?"
    got = docent_native.select_evidence_sentences(query, blocks)
    assert got == select_evidence_sentences_reference(query, blocks)
    # Terms (stems): fin, backflush, atla, week; "backflushing" and "weekly" match two of them.
    assert got == [(1, 0, 57, 2 / 4 + 0.001 * (1 / 2)), (0, 0, 59, 1 / 4 + 0.001 * (1 / 1))]
    assert blocks[got[0][0]][got[0][1]:got[0][2]] == "Backflushing with Cafiza detergent is recommended weekly."
    # The stop-word test is on the word before stemming: "describes" is a term (stem "describ").
    assert "describe" in STOP_WORDS and "describes" not in STOP_WORDS
    assert docent_native.select_evidence_sentences("describe", ["We describe the pump here."]) == []
    assert docent_native.select_evidence_sentences("describes", ["We describe the pump here."]) == [
        (0, 0, 26, 1.0 + 0.001)]


ROOTS = ["week", "backflush", "valid", "nation", "car", "tie", "stud", "ab", "x", "co2", "é", "éé",
         "İ", "İİ", "ΣΟΦ", "straß", "naïv", "ééé", "wing", "th"]
# Roots with zero, one or two suffixes (stacked suffixes test "first hit wins"), in mixed case.
VOCABULARY = sorted({
    word
    for root in ROOTS
    for tail in [""] + list(SUFFIXES) + [a + b for a in ("s", "e", "ing", "ation") for b in ("s", "ly", "es")]
    for word in ((root + tail), (root + tail).upper())
    if len(word) >= 3
})


def _fold(word: str) -> str:
    """The per-character case fold of a word (no final-sigma context), as the native side folds."""
    return "".join(ch.lower() for ch in word)


def _folded_stem(word: str) -> str:
    return stem(_fold(word))


def _is_term(word: str) -> bool:
    return len(word) >= 3 and _fold(word) not in STOP_WORDS


def test_rust_stem_splits_words_like_the_python_stem() -> None:
    # One block per word, each a four-word sentence whose other words ("zz") are never a term
    # (a stem keeps 3+ chars): a word's query selects exactly the blocks of its stem class.
    blocks = [f"{word} zz zz zz" for word in VOCABULARY]
    stems = [_folded_stem(word) for word in VOCABULARY]
    for index, word in enumerate(VOCABULARY):
        native = docent_native.select_evidence_sentences(word, blocks, len(blocks), 1.0)
        want = [i for i, other in enumerate(stems) if other == stems[index]] if _is_term(word) else []
        assert [block for block, *_ in native] == want, word
        assert [score.hex() for *_, score in native] == [(1.0 + 0.001 * (1 / (i + 1))).hex() for i in want]
        if index % 50 == 0:  # the reference is slow on 800 blocks; a sample suffices on top
            assert_same_selection(native, select_evidence_sentences_reference(word, blocks, len(blocks), 1.0))


STEM_WORD = st.one_of(
    st.sampled_from(VOCABULARY),
    st.tuples(st.sampled_from(ROOTS), st.lists(st.sampled_from(SUFFIXES), max_size=3)).map(
        lambda rs: rs[0] + "".join(rs[1])),
    st.text(alphabet="aeilnostdgyEILSéÉİıΣσςß_2", min_size=3, max_size=10),
)


@settings(max_examples=400, deadline=None)
@given(query_word=STEM_WORD, block_word=STEM_WORD)
def test_stem_match_matches_reference(query_word: str, block_word: str) -> None:
    blocks = [f"{block_word} zz zz zz"]
    native = docent_native.select_evidence_sentences(query_word, blocks, 1, 1.0)
    assert_same_selection(native, select_evidence_sentences_reference(query_word, blocks, 1, 1.0))
    assert bool(native) == (_is_term(query_word) and _folded_stem(query_word) == _folded_stem(block_word))
