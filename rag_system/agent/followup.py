"""Follow-ups made standalone, from the turns a request carries (the RAG API stores none).

Why: retrieval sees one query at a time. "How does it handle loss?" after
"What is QUIC?" retrieves nothing useful unless "it" becomes "QUIC". The rules
rewrite only a query that is clearly a follow-up — a referring pronoun, "what
about X?", "the second one", or a bare "why?" — and return every
self-contained question unchanged. An optional LLM rewrite is accepted only if
it keeps all of the query's content words and adds none that the
conversation does not contain.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Literal

from rag_system.agent.text import PRONOUNS, as_question, content_words, question_subject, strip_question, \
    substitute_pronoun, words
from rag_system.agent.types import TextGenerator, Turn, ask_generator

log = logging.getLogger(__name__)

Method = Literal["none", "rules", "llm"]


@dataclass(frozen=True)
class Rewrite:
    """The query to retrieve with; `rewritten` says whether it differs from the user's."""

    query: str
    rewritten: bool
    method: Method
    reason: str = ""


_WHAT_ABOUT = re.compile(
    r"^(?:and\s+|but\s+|ok(?:ay)?,?\s+|so\s+)?(?:what|how)\s+about\s+(?P<x>.+)$|"
    r"^(?:and\s+|but\s+)?(?:same|the same)\s+(?:for|with)\s+(?P<y>.+)$|"
    r"^and\s+(?:for\s+|in\s+|with\s+)?(?P<z>.+)$", re.I)
_ORDINAL = re.compile(
    r"\b(?:the\s+)?(?P<n>first|second|third|fourth|fifth|last|1st|2nd|3rd|4th|5th)"
    r"(?:\s+(?:one|item|option|entry|bullet)\b|(?=\s*$))", re.I)
_ORDINALS = {"first": 0, "1st": 0, "second": 1, "2nd": 1, "third": 2, "3rd": 2, "fourth": 3, "4th": 3,
             "fifth": 4, "5th": 4, "last": -1}
_ELLIPSIS = re.compile(
    r"^(?:and\s+)?(?:why|how|how so|how come|why not|why is that|why so|really|examples?|for example|"
    r"more|more details?|tell me more|go on|details|source|sources|where|when|who|elaborate|"
    r"explain more|say more|in what way|such as|like what)$", re.I)
_LIST_ITEM = re.compile(r"^\s*(?:\d+[.)]|[-*•])\s+(?P<item>.+)$", re.M)


def standalone_query(query: str, history: list[Turn], generator: TextGenerator | None = None) -> Rewrite:
    """Make a follow-up self-contained using the recent turns; others come back unchanged."""
    query = (query or "").strip()
    previous = next((t.resolved for t in reversed(history) if t.role == "user" and t.resolved.strip()), None)
    unchanged = Rewrite(query, False, "none")
    if not query or previous is None:
        return unchanged
    answer = next((t.text for t in reversed(history) if t.role == "assistant"), "")
    ruled, reason = _rules(query, previous, answer)
    if ruled is None:
        return Rewrite(query, False, "none", reason)
    if generator is not None:
        llm = _llm_rewrite(query, history, generator)
        if llm is not None:
            return Rewrite(llm, True, "llm", "follow-up rewritten by the LLM")
    if ruled == query:
        return unchanged
    return Rewrite(ruled, True, "rules", reason)


def _rules(query: str, previous: str, answer: str) -> tuple[str | None, str]:
    """(rewrite, why) for a follow-up, or (None, why not)."""
    body = strip_question(query)
    subject = question_subject(previous) or _keyword_subject(previous)
    ordinal = _ORDINAL.search(body)
    if ordinal and len(body.split()) <= 8:
        items = [_clean_item(m.group("item")) for m in _LIST_ITEM.finditer(answer)]
        index = _ORDINALS[ordinal.group("n").lower()]
        if not (items and -len(items) <= index < len(items) and items[index]):
            return f"{as_question(previous)} {_keep_punctuation(query)}", "ordinal without a list: previous question added"
        item = items[index]
        replaced = (body[:ordinal.start()] + item + body[ordinal.end():]).strip()
        rest = _WHAT_ABOUT.match(replaced)
        remainder = next((g for g in rest.groups() if g), "") if rest else replaced
        if re.sub(r"^(?:tell me (?:more )?about|explain|describe)\s+", "", remainder.strip(), flags=re.I) == item:
            return f"Tell me about {item}", f"'{ordinal.group(0)}' is item {index + 1 if index >= 0 else len(items)} " \
                                              "of the previous answer"
        return as_question(replaced) if query.endswith("?") else replaced, \
            f"'{ordinal.group(0)}' resolved from the previous answer's list"
    match = _WHAT_ABOUT.match(body)
    if match and len(body.split()) <= 8 and not _has_reference(body):
        other = next(g for g in match.groups() if g).strip(" ,")
        if content_words(other):
            tail = re.search(r"\s(?:of|for|on|in|about|under|with|from)\s(?!.*\s(?:of|for|on|in|about|under|"
                             r"with|from)\s)(?P<obj>.+)$", subject or "")
            if tail:  # "the warranty period for the X200": swap the object, keep the rest
                subject = tail.group("obj")
            if subject and subject.lower() in previous.lower():
                start = previous.lower().index(subject.lower())
                swapped = previous[:start] + other + previous[start + len(subject):]
                return as_question(swapped), f"'{other}' replaces '{subject}' in the previous question"
            return f"{as_question(previous)} What about {other}?", "previous question with the new topic"
    if _ELLIPSIS.match(body) or (len(body.split()) <= 3 and not content_words(body) and _has_reference(body)):
        return f"{as_question(previous)} {_keep_punctuation(query)}", "bare follow-up joined to the previous question"
    if _has_reference(body):
        if subject is None:
            return f"{as_question(body)} ({strip_question(previous)})", "previous question added as context"
        if set(content_words(subject)) <= set(content_words(body)):
            return None, "the query already names the previous subject"
        substituted = substitute_pronoun(body, subject)
        if substituted:
            return as_question(substituted) if query.endswith("?") else substituted, \
                f"pronoun resolved to '{subject}'"
    return None, "self-contained"


def _keep_punctuation(query: str) -> str:
    """The user's words capitalised; a question mark added only where none ended it."""
    text = query.strip()
    if text[-1:] in "?!.":
        return text[0].upper() + text[1:]
    return as_question(text)


def _has_reference(text: str) -> bool:
    return substitute_pronoun(text, "X") is not None


def _keyword_subject(previous: str) -> str | None:
    """A keyword-style previous query ("QUIC loss detection") is its own subject."""
    tokens = words(previous)
    if 0 < len(tokens) <= 5 and not any(t in PRONOUNS for t in tokens) and len(content_words(previous)) == len(tokens):
        return strip_question(previous)
    return None


def _clean_item(item: str) -> str:
    """A list item's topic: no citations, cut at the first colon or dash, at most 10 words."""
    item = re.sub(r"\[\d+(?:\s*,\s*\d+)*\]", "", item)
    item = re.sub(r"\*\*|__|`|^\*|\*$", "", item.strip())
    item = re.split(r":|\s[-–—]\s|\.\s", item, maxsplit=1)[0]
    return " ".join(item.split()[:10]).strip(" .,;")


_PROMPT = """Rewrite the user's last question so it can be understood without the conversation. \
Replace pronouns like "it" or "they" with what they refer to. Keep every word of the question. \
Output only the rewritten question.

Conversation:
{turns}
Last question: {query}
Rewritten question:"""


def _llm_rewrite(query: str, history: list[Turn], generator: TextGenerator) -> str | None:
    turns = "\n".join(f"{t.role}: {t.resolved[:300]}" for t in history[-4:])
    raw = ask_generator(generator, _PROMPT.format(turns=turns, query=query), 80, "memory")
    if raw is None:
        return None
    line = next((ln.strip() for ln in raw.splitlines() if ln.strip()), "")
    line = re.sub(r"^(?:rewritten question|question)\s*:\s*", "", line, flags=re.I).strip().strip('"\'')
    context = " ".join(t.resolved for t in history)
    if not accept_rewrite(query, line, context):
        log.debug("memory: discarded LLM rewrite %r", line[:200])
        return None
    return line


def accept_rewrite(query: str, candidate: str, context: str) -> bool:
    """An LLM rewrite is usable when it keeps the query's content words and invents none.

    Every content word of the query must survive (a prefix match allows
    "fees"/"fee"), every new content word must occur in the conversation, and
    it must not balloon (tiny models sometimes answer instead of rewriting).
    """
    if not candidate or words(candidate) == words(query) or len(candidate) > 3 * len(query) + 120 or "\n" in candidate:
        return False
    kept = content_words(candidate)
    known = set(content_words(context)) | set(content_words(query))

    def stem(word: str) -> str:
        return word[:-1] if len(word) > 3 and word.endswith("s") else word

    def present(word: str, pool: list[str] | set[str]) -> bool:
        return any(stem(w) == stem(word) or (len(word) > 4 and w[:5] == word[:5]) for w in pool)

    return all(present(w, kept) for w in content_words(query)) and all(present(w, known) for w in kept)
