"""Sentence splitting keeps text verbatim and does not split after abbreviations; the chunker and
the citation validator split alike."""

from __future__ import annotations

import docent_native
from hypothesis import given
from hypothesis import strategies as st

from rag_system.chunking.sentences import split_sentences


def test_basic_split() -> None:
    assert split_sentences("One two. Three four! Five six? Seven") == [
        "One two.", "Three four!", "Five six?", "Seven"]


def test_no_split_after_abbreviations_numbers_and_initials() -> None:
    text = "See e.g. Section 4.2 of the spec. Dr. Smith agreed. J. R. Doe wrote it. Version 1.5 works."
    assert split_sentences(text) == [
        "See e.g. Section 4.2 of the spec.", "Dr. Smith agreed.", "J. R. Doe wrote it.", "Version 1.5 works."]


def test_lowercase_continuation_is_not_a_boundary() -> None:
    assert split_sentences("It costs approx. ten euros. next line") == ["It costs approx. ten euros. next line"]


def test_quotes_and_brackets_stay_with_their_sentence() -> None:
    assert split_sentences('He said "stop." Then left. (Really.) Yes.') == [
        'He said "stop."', "Then left.", "(Really.)", "Yes."]


def test_the_chunker_splits_as_the_validator_does() -> None:
    # Lines of a list, a capital outside ASCII and a trailing citation: the native rules.
    text = "Steps:\n- unplug it\n- wait. Élan is next. It is red. [1] Then go."
    assert split_sentences(text) == ["Steps:", "- unplug it", "- wait.", "Élan is next.", "It is red. [1]", "Then go."]
    assert split_sentences(text) == [text[a:b] for a, b in docent_native.split_sentences(text)]


@given(st.text(alphabet=st.sampled_from(list("ab .!?\n\tXY1\"'()")), max_size=200))
def test_sentences_are_verbatim_substrings_in_order(text: str) -> None:
    position = 0
    for sentence in split_sentences(text):
        assert sentence and sentence == sentence.strip()
        found = text.find(sentence, position)
        assert found >= 0
        position = found + len(sentence)
    # Nothing but whitespace between sentences is ever dropped.
    joined = "".join(split_sentences(text))
    assert "".join(joined.split()) == "".join(text.split())
