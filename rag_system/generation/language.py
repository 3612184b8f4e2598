"""Answer in the question's language: which language a question is in, and the refusal in it.

Why: a German question over German documents gets a German quote (quotes are the documents' own
words), but the refusal was always the English sentence, and the model was never told which
language to write in, so it answered German questions in English. Detection is the documents'
detector (`rag_system/indexing/languages.py`) made fit for one short sentence: two function words
of one language that English does not have, more than the question's English stop words, say it;
anything unsure stays English, so an English prompt is byte for byte what it was (and keeps its
prompt cache).
"""

from __future__ import annotations

from functools import cache

from common.lexicon import STOP_WORDS, WORD
from rag_system.indexing.languages import CJK, FUNCTION_WORDS, detect_language

#: The fixed refusal per language; English is `prompts.REFUSAL_TEXT`.
REFUSALS: dict[str, str] = {
    "de": "Die Dokumente enthalten nicht genügend Informationen, um diese Frage zu beantworten.",
    "fr": "Les documents ne contiennent pas assez d'informations pour répondre à cette question.",
    "es": "Los documentos no contienen información suficiente para responder a esta pregunta.",
    "it": "I documenti non contengono informazioni sufficienti per rispondere a questa domanda.",
    "pt": "Os documentos não contêm informações suficientes para responder a esta pergunta.",
    "nl": "De documenten bevatten niet genoeg informatie om deze vraag te beantwoorden.",
    "id": "Dokumen tidak memuat cukup informasi untuk menjawab pertanyaan ini.",
    "ja": "文書には、この質問に答えるのに十分な情報がありません。",
    "zh": "文档中没有足够的信息来回答这个问题。",
    "ko": "문서에 이 질문에 답할 수 있는 충분한 정보가 없습니다.",
}
#: How the prompt names each language ("Answer in German.").
NAMES: dict[str, str] = {"de": "German", "fr": "French", "es": "Spanish", "it": "Italian", "pt": "Portuguese",
                         "nl": "Dutch", "id": "Indonesian", "ja": "Japanese", "zh": "Chinese", "ko": "Korean"}
#: Function words of one language a question needs before it counts as that language (one will do
#: when the question has no English function word at all).
MIN_WORDS = 2
#: Question words the documents' detector does not need, for short questions ("Wer hat ...?").
QUESTION_WORDS: dict[str, frozenset[str]] = {
    "de": frozenset("wer wen wem wessen hat haben gibt sind muss soll darf welchen welchem wieviel wieviele "
                    "viele".split()),
    "fr": frozenset("qui quoi combien faut".split()),
    "es": frozenset("quién quiénes cuánto cuántos cuántas hay".split()),
    "it": frozenset("chi quanto quanti quante".split()),
    "pt": frozenset("quem quanto quantos quantas".split()),
    "nl": frozenset("wat hoe waar welke wanneer waarom".split()),
    "id": frozenset("siapa berapa cara".split()),
}


def question_language(question: str) -> str:
    """The ISO code of a question's language; "en" when nothing says otherwise."""
    code = detect_language(question)
    if code in CJK:  # by its script; counting words over one sentence misreads English ("a", "do")
        return code
    words = WORD.findall(question.lower())
    vocabularies, shared = _vocabularies()
    english = sum(w in STOP_WORDS and w not in shared for w in words)
    counts = {lang: sum(w in vocabulary for w in words) for lang, vocabulary in vocabularies.items()}
    best = max(counts, key=lambda lang: counts[lang])
    if counts[best] > english and (counts[best] >= MIN_WORDS or (counts[best] == 1 and english == 0)):
        return best
    return "en"


@cache
def _vocabularies() -> tuple[dict[str, frozenset[str]], frozenset[str]]:
    """Per language, its words that English lacks; and every other language's words.

    A word English also has ("a", "do", "was") says nothing either way: "How do I get a beta?" is not
    Portuguese, and "Was kostet der Saal?" is not English.
    """
    vocabularies = {lang: (FUNCTION_WORDS[lang] | QUESTION_WORDS.get(lang, frozenset())) - STOP_WORDS
                    for lang in FUNCTION_WORDS if lang != "en"}
    shared = frozenset().union(*(FUNCTION_WORDS[lang] for lang in vocabularies), *QUESTION_WORDS.values())
    return vocabularies, shared


def refusal_for(question: str, english: str) -> str:
    """The fixed refusal in the question's language (`english` when it is English or unknown)."""
    return REFUSALS.get(question_language(question), english)


def language_rule(question: str) -> str:
    """The prompt's last line for a question not in English ("" for English: the prompt is unchanged)."""
    code = question_language(question)
    name = NAMES.get(code)
    return f"Answer in {name}. If the sources do not answer it, reply exactly: {REFUSALS[code]}" if name else ""


def is_translated_refusal(text: str) -> bool:
    """Whether a model's answer opens with one of the translated fixed refusals."""
    start = text.strip().lower()
    return any(start.startswith(sentence.lower().rstrip(".。")) for sentence in REFUSALS.values())
