"""Everyday phrases of a yes/no question in the words documentation uses (`grounding.questions`)."""

from __future__ import annotations

from rag_system.grounding.questions import plain_question


def test_phrases_people_ask_in_become_the_words_documents_use():
    assert plain_question("Is the reranker switched on out of the box?") == "Is the reranker switched on by default?"
    assert plain_question("Does list.sort() hand back the sorted list?") == "Does list.sort() return the sorted list?"
    assert plain_question("It hands back None.") == "It returns None."
    assert plain_question("Is it fine to backflush the Atlas-7 once a week?") == "can I backflush the Atlas-7 weekly?"
    assert plain_question("Should backups run every day?") == "Should backups run daily?"


def test_a_closing_or_only_alternative_is_left_off():
    assert plain_question("Can Python be used for functional programming, or only object-oriented?") == \
        "Can Python be used for functional programming?"
    assert plain_question("Is the limit per user or rather per team?") == "Is the limit per user or rather per team?"


def test_words_that_only_contain_a_phrase_stay():
    assert plain_question("Is the boxed set handed over by default?") == "Is the boxed set handed over by default?"
    assert plain_question("Does the backhand count?") == "Does the backhand count?"


def test_a_name_the_documents_abbreviate_is_written_as_their_initials():
    sources = ["No IP-related claims are open.", "The NDA was signed."]
    assert plain_question("Is the firm being sued over its intellectual property?", sources) == \
        "Is the firm being sued over its IP?"
    assert plain_question("Did both sides sign the non-disclosure agreement?", sources) == \
        "Did both sides sign the NDA?"
    # words that only happen to start with the letters, split by other words, or initials already used
    assert plain_question("Is it in place?", sources) == "Is it in place?"
    assert plain_question("Is intellectual and property law covered?", sources) == \
        "Is intellectual and property law covered?"
    assert plain_question("Is IP covered?", sources) == "Is IP covered?"
    assert plain_question("Is intellectual property covered?") == "Is intellectual property covered?"
