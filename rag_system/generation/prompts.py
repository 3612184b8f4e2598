"""The grounded prompt and the repair prompt.

Why this wording: small instruction models (0.5B-1.5B) follow short, concrete
rules and copy the shape of an example far better than they follow abstract
policy. The rules therefore name the exact citation form the validator parses
(`[n]` after every sentence), and the refusal is one fixed sentence so it can
be recognised reliably instead of guessed from free text.
"""

from __future__ import annotations

import re

from rag_system.generation.llm import Message

REFUSAL_TEXT = "The documents do not contain enough information to answer this question."

SYSTEM_PROMPT = (
    "You are Docent, an assistant that answers questions using only the numbered sources the user gives you.\n"
    "Rules:\n"
    "1. Use only facts stated in the sources. Never use outside knowledge.\n"
    "2. End every sentence with the number of the source it comes from, like [1] or [2, 3].\n"
    "3. Be brief: answer in one to four sentences.\n"
    f"4. If the sources do not answer the question, reply exactly: {REFUSAL_TEXT}"
)

EXAMPLE = (
    "Example answer: The warranty lasts 24 months from the date of purchase [2]. "
    "It does not cover accidental damage [2, 4]."
)


def grounded_messages(question: str, evidence: str, history: str = "") -> list[Message]:
    """System rules, then the sources, then the question (recency helps small models)."""
    parts = [f"Sources:\n\n{evidence}"]
    if history:
        parts.append(f"Earlier in this conversation:\n{history}")
    parts.append(f"{EXAMPLE}\n\nQuestion: {question}\nAnswer (cite every sentence):")
    return [Message("system", SYSTEM_PROMPT), Message("user", "\n\n".join(parts))]


def repair_messages(question: str, evidence: str, answer: str, problems: list[str]) -> list[Message]:
    """Show the model its own answer and the validator's findings, ask for a fixed version."""
    listed = "\n".join(f"- {p}" for p in problems)
    user = (f"Sources:\n\n{evidence}\n\nQuestion: {question}\n\nYour previous answer:\n{answer}\n\n"
            f"It has these problems:\n{listed}\n\n"
            "Rewrite the answer so that every sentence is supported by the sources and ends with "
            "the number of its source in square brackets, like [1]. Only use source numbers that exist. "
            "Only quote text that appears word for word in the source. "
            f"If the sources do not answer the question, reply exactly: {REFUSAL_TEXT}\nAnswer:")
    return [Message("system", SYSTEM_PROMPT), Message("user", user)]


_REFUSAL_PATTERNS = re.compile(
    r"^\W*(the (documents?|sources?|context|provided (text|sources?|documents?))"
    r" (do|does) not (contain|say|mention|provide|include|specify|state|answer)"
    r"|(there is|i (can|could) find|i have) no (information|mention)"
    r"|i (don't|do not|cannot|can't) (know|find|answer)"
    r"|(this|that|the question) is not (covered|answered|mentioned)"
    r"|no (relevant )?information)",
    re.IGNORECASE,
)


def is_refusal(answer: str) -> bool:
    """True when the model declined: the fixed sentence or an obvious paraphrase of it, up front."""
    return bool(_REFUSAL_PATTERNS.search(answer.strip()))


_SOURCE_WORDS = re.compile(r"\[\s*(?:source|sources|block|doc|document|ref)\s*#?\s*(\d+(?:\s*,\s*\d+)*)\s*\]",
                           re.IGNORECASE)
_SPACED = re.compile(r"\[\s+(\d+(?:\s*,\s*\d+)*)\s*\]|\[(\d+(?:\s*,\s*\d+)*)\s+\]")
_LEADING = re.compile(r"^\s*(?:answer|response)\s*:\s*", re.IGNORECASE)


def normalise_answer(text: str) -> str:
    """Rewrite citation spellings small models use (`[Source 2]`, `[ 1 ]`) to `[n]`; trim."""
    text = _LEADING.sub("", text.strip())
    text = _SOURCE_WORDS.sub(lambda m: f"[{m.group(1)}]", text)
    text = _SPACED.sub(lambda m: f"[{(m.group(1) or m.group(2)).strip()}]", text)
    return text.strip()
