"""Small English text helpers shared by the agent steps.

Rule-based, deterministic and dependency-free: they are the reliable core that
the optional LLM only refines. They aim at precision, not coverage: when a
pattern is not clearly recognised they return `None` and the caller keeps the
user's words unchanged.
"""

from __future__ import annotations

import re

from common.lexicon import STOP_WORDS
from common.lexicon import tokens as words

PRONOUNS = frozenset({"it", "its", "they", "them", "their", "theirs", "he", "she", "him", "his",
                      "her", "hers", "this", "that", "these", "those"})

#: Verbs that commonly follow the subject in "How does <subject> <verb> ...".
_VERBS = ("work|works|mean|means|handle|handles|do|does|say|says|cover|covers|include|includes|define|"
          "defines|require|requires|support|supports|use|uses|differ|differs|compare|affect|affects|happen|"
          "apply|applies|get|send|sends|need|needs|contain|contains|return|returns|cost|costs|take|takes|"
          "provide|provides|allow|allows|prevent|prevents|ensure|ensures|compute|calculate|specify|specifies|"
          "describe|describes|recommend|state|states|change|changes|start|end|run|runs|have|has|look|"
          "behave|interact|relate|impact|protect|detect|recover|fail|expire|renew|compute")
_DET = r"(?:the|a|an|this|that|these|those|my|our|your)"
_AUX = r"(?:does|do|did|can|could|should|will|would|must|may|might)"
_BE = r"(?:is|are|was|were)"
_TRAILING_JUNK = re.compile(
    r"\s+(?:used for|good for|for|about|made of|like|based on|defined as|called|all about|exactly|"
    r"due|available|valid|required|needed|allowed|possible|open|closed|applicable|effective|payable|"
    r"in (?:this|the) (?:document|documents|docs|paper|report|text|file|files|contract|policy))$", re.I)

_SUBJECT_PATTERNS = (
    # "How many employees does StartupXYZ have" -> "StartupXYZ's employees"
    re.compile(rf"^how\s+(?:many|much)\s+(?P<head>\w+(?:\s+\w+)?)\s+{_AUX}\s+(?P<owner>.+?)\s+(?:have|has|own|owns|"
               r"employ|employs|hold|holds|get|gets|pay|pays|receive|receives)\b.*$", re.I),
    re.compile(r"^(?:(?:can|could|would) you\s+|please\s+)*(?:tell me (?:more )?about|explain|describe|define|"
               r"summari[sz]e|what about|how about|give me an overview of|an overview of|details on|"
               r"more (?:details )?on|info(?:rmation)? (?:on|about))\s+(?P<np>.+)$", re.I),
    re.compile(r"^(?:is|are)\s+there\s+(?:any\s+)?(?P<np>.+)$", re.I),
    re.compile(rf"^(?:how|why|when|where|what|which)\s+{_BE}\s+(?P<np>.+?)\s+\w+(?:ed|en)\b.*$", re.I),
    re.compile(rf"^(?:how|why|when|where|what|which)\s+{_AUX}\s+(?P<np>.+?)\s+(?:{_VERBS})\b.*$", re.I),
    re.compile(rf"^(?:what|who|which|when|where)\s+{_BE}\s+(?P<np>.+)$", re.I),
    re.compile(r"^(?:what|who)'s\s+(?P<np>.+)$", re.I),
    re.compile(rf"^(?:does|do|did|can|could|should|will|would|must)\s+(?P<np>.+?)\s+(?:{_VERBS})\b.*$", re.I),
    re.compile(r"^(?:is|are|was|were)\s+(?P<np>.+?)\s+\w+(?:ed|en)\b.*$", re.I),
    re.compile(rf"^(?:is|are|was|were)\s+(?P<np>{_DET}\s+.+?)\s+\w+$", re.I),  # "Is the deposit refundable"
)


def content_words(text: str) -> list[str]:
    """Words that carry topic: not stop words, not pronouns; order kept, de-duplicated."""
    seen: dict[str, None] = {}
    for w in words(text):
        w = w.removesuffix("'s")
        if w not in STOP_WORDS and w not in PRONOUNS and w not in seen:
            seen[w] = None
    return list(seen)


def strip_question(text: str) -> str:
    """The text without surrounding whitespace and trailing ?, ! or ."""
    return (text or "").strip().rstrip("?!. \t").strip()


_QUESTION_START = re.compile(
    r"^(?:what|how|why|when|where|who|which|whose|whom|is|are|was|were|does|do|did|can|could|should|"
    r"will|would|must|has|have|may|might|shall)\b", re.I)


def as_question(text: str) -> str:
    """Capitalised; a question gets a "?", an instruction ("Explain X") none."""
    body = strip_question(text)
    if not body:
        return body
    body = body[0].upper() + body[1:]
    return body + "?" if _QUESTION_START.match(body) else body


def question_subject(question: str) -> str | None:
    """The main noun phrase a question is about, or `None` if unsure.

    "How is the fee calculated?" -> "the fee"; "What is QUIC?" -> "QUIC";
    "Tell me about the retry policy" -> "the retry policy". Used to resolve
    "it"/"they" in a follow-up or in the second half of a compound question.
    """
    body = strip_question(question)
    body = re.sub(r"^(?:and|also|so|ok|okay|now|then)[,\s]+", "", body, flags=re.I)
    for pattern in _SUBJECT_PATTERNS:
        match = pattern.match(body)
        if match and "owner" in pattern.groupindex:
            owner = _clean_np(match.group("owner"))
            if owner:
                return f"{owner}'s {match.group('head')}"
            continue
        if match:
            np = _clean_np(match.group("np"))
            if np:
                return np
    return None


def _clean_np(np: str) -> str | None:
    np = np.strip(" ,;:")
    for _ in range(2):
        np = _TRAILING_JUNK.sub("", np).strip(" ,;:")
    tokens = words(np)
    if not tokens or len(tokens) > 8:
        return None
    if any(t in PRONOUNS for t in tokens) or not content_words(np):
        return None
    if re.fullmatch(rf"{_DET}", tokens[0], re.I) and len(tokens) == 1:
        return None
    return np


_PRONOUN_SUB = re.compile(
    r"\b(?:(?P<poss>its|their|his)|(?P<pro>it|they|them|he|she|him)|(?P<her>her)|"
    r"(?P<dem>(?:this|that|these|those)(?P<one>\s+ones?)?))\b", re.I)
_EXPLETIVE_IT = re.compile(
    r"it\s+(?:(?:is|was)\s+)?(?:possible|necessary|true|required|allowed|recommended|mandatory|ok|okay|"
    r"safe|legal|better|worth|likely|common|important|raining|time)\b", re.I)
#: A bare demonstrative refers ("why is that?", "what does this mean?"); one
#: before a noun ("this section") is a determiner and is left alone.
_DEM_REFERS = re.compile(
    r"\s*(?:[?.!,;]|$|\s*(?:is|are|was|were|mean|means|do|does|did|work|works|apply|applies|include|"
    r"includes|cover|covers|happen|happens|require|requires|cost|costs|say|says|matter|matters|"
    r"affect|affects|differ|differs|compare|relate|relates|change|changes|\w+ed)\b)", re.I)


_AFTER_COPULA = re.compile(r"\b(?:is|are|was|were|isn't|aren't)\s+$", re.I)
_LAST_WORD = re.compile(r"\s+\w+\s*(?:[?.!]\s*)?$")  # "Is that transferable?": demonstrative + adjective


def substitute_pronoun(text: str, subject: str) -> str | None:
    """Replace the first referring pronoun with `subject`; `None` if there is none.

    "When is it due?" + "the fee" -> "When is the fee due?"; possessives get
    "'s". An expletive "is it possible to ..." and a determiner ("this
    section") refer to nothing and are skipped.
    """
    possessive = subject + ("'" if subject.endswith("s") and not subject.endswith("ss") else "'s")
    for match in _PRONOUN_SUB.finditer(text):
        pro = (match.group("pro") or "").lower()
        if pro == "it" and _EXPLETIVE_IT.match(text, match.start()):
            continue
        if match.group("dem") and not match.group("one") and not _DEM_REFERS.match(text, match.end()) \
                and not (_AFTER_COPULA.search(text[:match.start()]) and _LAST_WORD.match(text, match.end())):
            continue
        replacement = subject
        if match.group("poss"):
            replacement = possessive
        elif match.group("her"):
            following = re.match(r"\s+(\w+)", text[match.end():])
            if following and following.group(1).lower() not in STOP_WORDS:
                replacement = possessive
        return text[:match.start()] + replacement + text[match.end():]
    return None
