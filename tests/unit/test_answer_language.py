"""Answers and refusals in the question's language; English prompts stay exactly as they were.

The English questions below are ones the first detector took for Portuguese ("a", "do", "as"):
every English gold question of the shared corpora and of eval/answer_sets stayed English when
this was written (552 questions), and these are the hardest of them.
"""

from __future__ import annotations

import pytest

from rag_system.generation.language import REFUSALS, language_rule, question_language, refusal_for
from rag_system.generation.prompts import REFUSAL_TEXT, SYSTEM_PROMPT, grounded_messages, is_refusal

ENGLISH = [
    "Will a warranty claim be accepted without a serial number, and where do I find it?",
    "What confidence value is interpreted as a failed parse rather than a real score?",
    "How do I get a beta test version of Python?",
    "How do I convert a string to a number?",
    "Does a CRYPTO frame have a FIN bit like a STREAM frame?",
    "Do I need a doctor's certificate if I'm off sick for a whole week?",
    "Who wrote Le Monde?",
    "Is the café in Lisbon open on Sunday?",
    "What is the capital of Mongolia?",
]


@pytest.mark.parametrize("question", ENGLISH)
def test_english_questions_stay_english(question: str) -> None:
    assert question_language(question) == "en"
    assert language_rule(question) == "" and refusal_for(question, REFUSAL_TEXT) == REFUSAL_TEXT


@pytest.mark.parametrize(("question", "code"), [
    ("Wie entferne ich ein Paket wieder?", "de"),
    ("Was kostet der Veranstaltungsort in Lissabon?", "de"),
    ("Wer hat die Datei geschrieben?", "de"),
    ("Comment est-ce que je configure le réseau ?", "fr"),
    ("Quel est le budget?", "fr"),
    ("¿Cuál es el plazo de entrega?", "es"),
    ("Come si installa un pacchetto?", "it"),
    ("Qual é o prazo?", "pt"),
    ("Hoe verwijder ik een pakket?", "nl"),
    ("Bagaimana cara menghapus paket?", "id"),
    ("パッケージを削除するにはどのコマンドを使いますか?", "ja"),
    ("如何删除软件包?", "zh"),
])
def test_other_languages_are_told(question: str, code: str) -> None:
    assert question_language(question) == code
    assert refusal_for(question, REFUSAL_TEXT) == REFUSALS[code]
    assert language_rule(question).endswith(REFUSALS[code])


def test_the_prompt_asks_for_the_language_only_when_it_is_not_english() -> None:
    evidence = "[1] a.txt, p. 1\nMit apt-get remove entfernen Sie ein Paket."
    english = grounded_messages("How do I remove a package?", evidence)
    assert english[0].content == SYSTEM_PROMPT
    assert english[1].content == f"Sources:\n\n{evidence}\n\nQuestion: How do I remove a package?"
    german = grounded_messages("Wie entferne ich ein Paket wieder?", evidence)[1].content
    assert german.endswith("Question: Wie entferne ich ein Paket wieder?\nAnswer in German. If the sources do "
                           f"not answer it, reply exactly: {REFUSALS['de']}")


def test_a_translated_refusal_is_a_refusal() -> None:
    assert is_refusal(REFUSALS["de"]) and is_refusal(REFUSALS["ja"]) and is_refusal(REFUSAL_TEXT)
    assert not is_refusal("Mit apt-get remove entfernen Sie ein Paket [1].")
