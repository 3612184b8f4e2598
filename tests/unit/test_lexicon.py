"""One lexicon (`common.lexicon`) for chunking, generation, the agent and the native sentence scorer."""

from __future__ import annotations

import re

import docent_native
import pytest

from common.lexicon import ABBREVIATIONS, CARDINALS, STOP_WORDS, SUFFIXES, WORD, stem, tokens, words
from testkit import native_reference_facts as facts_reference
from testkit import native_reference_numbers as numbers_reference
from testkit import REPO_ROOT

MIN_TERM_CHARS = 3  # native/src/evidence.rs: shorter query words are never terms


def native_list(source: str, name: str) -> list[str]:
    """The entries of `pub const <name>: [&str; N]` in native/src/<source>, checked to be N distinct ones."""
    text = (REPO_ROOT / "native" / "src" / source).read_text()
    table = re.search(rf"pub const {name}: \[&str; (\d+)\] = \[(.*?)\];", text, re.S)
    assert table is not None, (source, name)
    entries = re.findall(r'"([^"]+)"', table.group(2))
    assert len(entries) == int(table.group(1)) == len(set(entries))
    return entries


def test_the_native_stop_words_are_the_lexicon_s() -> None:
    assert set(native_list("evidence.rs", "STOP_WORDS")) == {w for w in STOP_WORDS if len(w) >= MIN_TERM_CHARS}


@pytest.mark.parametrize(("source", "name", "python"), [
    ("lexicon.rs", "SUFFIXES", list(SUFFIXES)),  # in order: the first that fits wins
    ("block_numbers.rs", "UNITS", numbers_reference._UNITS),
    ("polarity.rs", "NEGATORS", facts_reference.NEGATORS),
    ("polarity.rs", "COMPARATIVES", facts_reference.COMPARATIVES),
    ("polarity.rs", "CONDITIONAL", facts_reference.CONDITIONAL),
    ("polarity.rs", "SPLITTERS", facts_reference.SPLITTERS),
    ("facts.rs", "NOT_NAMES", facts_reference.NOT_NAMES),
])
def test_each_word_list_on_both_sides_is_one_list(source: str, name: str, python: object) -> None:
    native = native_list(source, name)
    assert (native if isinstance(python, list) else set(native)) == python


def test_the_native_number_words_are_the_references_and_start_with_the_cardinals() -> None:
    text = (REPO_ROOT / "native" / "src" / "block_numbers.rs").read_text()
    table = re.search(r"pub const NUMBER_WORDS: \[\(&str, u64\); (\d+)\] = \[(.*?)\];", text, re.S)
    assert table is not None
    pairs = [(w, int(n.replace("_", ""))) for w, n in re.findall(r'\("([^"]+)", ([\d_]+)\)', table.group(2))]
    assert len(pairs) == int(table.group(1)) and dict(pairs) == numbers_reference._NUMBER_WORDS
    assert [w for w, n in pairs[:len(CARDINALS)]] == list(CARDINALS) and [n for _, n in pairs[:21]] == list(range(21))


def test_the_native_splitter_s_abbreviations_are_the_lexicon_s() -> None:
    assert set(native_list("sentences.rs", "ABBREVIATIONS")) == ABBREVIATIONS
    longest = re.search(r"const MAX_ABBREVIATION: usize = (\d+);", (REPO_ROOT / "native" / "src" / "sentences.rs").read_text())
    assert longest is not None and int(longest.group(1)) == max(len(a) for a in ABBREVIATIONS)
    for abbreviation in ("e.g.", "Dr.", "approx."):  # and the splitter reads them
        assert docent_native.split_sentences(f"See {abbreviation} Smith here.") == [(0, 20 + len(abbreviation) - 4)]


def test_the_native_scorer_ignores_exactly_the_lexicon_s_stop_words() -> None:
    block = "Explain describes how the turbine gearbox works under heavy load every winter."
    for word in ("explain", "describe", "summarise", "the"):
        assert word in STOP_WORDS
        assert docent_native.select_evidence_sentences(f"{word} {word}", [block], 3, 0.5) == []
    assert docent_native.select_evidence_sentences("gearbox", [block], 3, 0.5)


def test_words_and_stems() -> None:
    assert words("The Gearbox's 2nd check, e.g. v2.1") == ["the", "gearbox", "s", "2nd", "check", "e", "g", "v2", "1"]
    assert WORD.findall("naïve café") == ["naïve", "café"]
    assert tokens("What's the X200's e-mail, v2.1?") == ["what's", "the", "x200's", "e-mail", "v2.1"]
    assert [stem(w) for w in ("assumed", "assume", "validations", "running", "ox")] == \
        ["assum", "assum", "valid", "runn", "ox"]
    assert {"what", "tell", "explain", "summarise", "s", "t", "don"} <= STOP_WORDS
