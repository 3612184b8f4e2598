"""Which language a text is in, cheaply, and the full-text analyzer that suits it.

Why: LanceDB's default analyzer splits on spaces and punctuation and stems
English. Over Japanese or Chinese (no spaces) it finds nothing at all, and
over German it stems with English rules and keeps German stop words. An
index's analyzer is chosen from its documents (`FTS_LANGUAGE=auto`) or set.

Detection is deliberately simple and deterministic: the share of CJK
characters (kana means Japanese), else which language's most frequent
function words occur most. It only has to tell the languages apart that
change the analyzer; the word lists also serve the answer layer, so a
German question's "wie" and "ich" are not taken for key terms.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from typing import TypedDict

#: ISO code -> the stemmer/stop-word language of LanceDB's analyzer (None: no stemmer for it).
ANALYZER_LANGUAGES: dict[str, str | None] = {
    "en": "English", "de": "German", "fr": "French", "es": "Spanish", "it": "Italian", "pt": "Portuguese",
    "nl": "Dutch", "sv": "Swedish", "da": "Danish", "no": "Norwegian", "fi": "Finnish", "ru": "Russian",
    "id": None, "ja": None, "zh": None, "ko": None,
}
CJK = frozenset({"ja", "zh", "ko"})

FUNCTION_WORDS: dict[str, frozenset[str]] = {
    "en": frozenset("the of and to in is that for it with as was on are be this by or from at which an not "
                    "you can have if".split()),
    "de": frozenset("der die das und ist nicht ein eine mit den dem des sich auf für von zu im auch wird "
                    "werden sie ich wie kann oder bei einem einer wenn was wo warum wann welche welcher welches".split()),
    "fr": frozenset("le la les et est une des du en que pour pas dans qui sur avec par ce sont vous il "
                    "au aux ou cette peut comment quel quelle quels quelles où quand pourquoi je".split()),
    "es": frozenset("el la los las y es una del en que para por con se su al lo como más pero puede "
                    "este esta son cómo qué dónde cuándo cuál".split()),
    "it": frozenset("il la le gli di che è e un una per non con del della sono si nel alla può come questo "
                    "questa cosa dove quando perché quale".split()),
    "pt": frozenset("o a os as e é um uma do da dos das em que para com não por se no na ao pode como "
                    "este esta são onde quando qual porque".split()),
    "id": frozenset("yang dan di ini itu dengan untuk dari dalam tidak adalah akan pada atau juga dapat "
                    "ke oleh anda bagaimana apa mengapa kapan".split()),
    "nl": frozenset("de het een en van is dat niet in op te voor met zijn er aan ook als bij".split()),
}

_WORD = re.compile(r"\w+")
_KANA = re.compile(r"[\u3040-\u30ff]")
_HAN = re.compile(r"[\u4e00-\u9fff\u3400-\u4dbf]")
_HANGUL = re.compile(r"[\uac00-\ud7af]")
#: CJK characters above this share of all letters make a text CJK.
CJK_SHARE = 0.15


def detect_language(texts: Iterable[str] | str) -> str:
    """The ISO code of the texts' main language ("en" when nothing tells)."""
    sample = texts if isinstance(texts, str) else "\n".join(texts)
    letters = sum(1 for ch in sample if ch.isalpha()) or 1
    kana, han, hangul = (len(p.findall(sample)) for p in (_KANA, _HAN, _HANGUL))
    if (kana + han + hangul) / letters >= CJK_SHARE:
        if hangul > kana + han:
            return "ko"
        return "ja" if kana >= 0.1 * (kana + han) else "zh"
    counts: Counter[str] = Counter()
    for word in _WORD.findall(sample.lower()):
        for code, words in FUNCTION_WORDS.items():
            if word in words:
                counts[code] += 1
    if not counts:
        return "en"
    best, hits = counts.most_common(1)[0]
    return best if hits >= 3 else "en"


class Analyzer(TypedDict):
    """How a full-text index splits and normalises words (LanceDB's `FTS` arguments of that name)."""

    base_tokenizer: str
    language: str
    stem: bool
    remove_stop_words: bool


class FtsConfig(Analyzer):
    """A full-text index's configuration, as `FTS(**config)` takes it and `index_details` reports it."""

    ascii_folding: bool


def analyzer(language: str, *, stem: bool, remove_stop_words: bool) -> Analyzer:
    """LanceDB FTS options for a language: its stemmer and stop words, or the ICU word segmenter for CJK.

    A language without a stemmer (Indonesian) keeps its words as they are,
    since English rules would only mangle them.
    """
    if language in CJK:
        return {"base_tokenizer": "icu", "language": "English", "stem": False, "remove_stop_words": False}
    name = ANALYZER_LANGUAGES.get(language)
    if name is None:
        return {"base_tokenizer": "simple", "language": "English", "stem": False, "remove_stop_words": False}
    return {"base_tokenizer": "simple", "language": name, "stem": stem, "remove_stop_words": remove_stop_words}


def fts_options(settings: object, sample: Iterable[str]) -> FtsConfig:
    """The full-text options of a build: `FTS_STEM`/`FTS_REMOVE_STOP_WORDS`/`FTS_ASCII_FOLDING`, with
    the analyzer of `FTS_LANGUAGE` (or of the language detected in `sample` when it is `auto`)."""
    chosen = getattr(settings, "fts_language", "auto")
    language = detect_language(list(sample)) if chosen == "auto" else chosen
    options = analyzer(language, stem=bool(getattr(settings, "fts_stem", True)),
                       remove_stop_words=bool(getattr(settings, "fts_remove_stop_words", True)))
    return FtsConfig(**options, ascii_folding=bool(getattr(settings, "fts_ascii_folding", True)))


def all_function_words() -> frozenset[str]:
    """Every language's function words: what a key-term extractor should skip whatever the question's language."""
    return frozenset().union(*FUNCTION_WORDS.values())
