"""A "Yes," that the rest of its own sentence denies."""

from __future__ import annotations

import pytest

from rag_system.generation.replies import yes_then_no

SPLIT = "Can parental leave be split into more than three blocks?"


@pytest.mark.parametrize("question, sentence, flipped", [
    (SPLIT, "Yes, parental leave may be split into no more than 3 separate blocks. [1]", True),  # the web app's
    (SPLIT, "No, parental leave may be split into no more than 3 separate blocks. [1]", False),
    (SPLIT, "Parental leave may be split into no more than 3 separate blocks. [1]", False),  # no reply word
    ("Can I take parental leave in blocks?", "Yes, it may be split into up to 3 separate blocks [1].", False),
    ("Is leave paid out on resignation?", "Yes — it isn't paid out unless you served 6 months [2].", True),
    # a question that asks about the negation: "yes" and a negated statement agree
    ("Is leave taken without approval unpaid?", "Yes, leave taken without portal approval is unpaid [1].", False),
    ("Does the policy not cover contractors?", "Yes, contractors are not covered [1].", False),
    # "no" inside a citation marker or a word is not a negation
    (SPLIT, "Yes, it can be split into 4 blocks [1].", False),
    (SPLIT, "Yes, nobody limits the number of blocks [1].", False),
])
def test_yes_then_no(question: str, sentence: str, flipped: bool):
    assert yes_then_no(question, sentence) is flipped
