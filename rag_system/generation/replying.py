"""The model's "Yes" or "No" for a yes/no question whose checked answer does not say it.

Why: the verifier's rules give a reply only where the question, read as a claim, is stated or
denied in one source clause in the question's own terms. Most questions are worded otherwise
("Is StartupXYZ being sued?" — "No IP-related litigation is pending or threatened"), so a
quote or a checked model sentence holds the answer and never says "no". Read alone, with the
question and nothing else, the packaged 1.5B model says the right "Yes"/"No" for 32 of the 36
negation rows' answering sentences; inside the answering prompt (its system rules, numbered
sources) it leans to "Yes" and gets 23.

It is still a small model, so its word is taken only where the sentence's polarity agrees: a
"No" from a sentence that negates (not, no, never, without, …) what the question asks
positively, a "Yes" from one that does not. Otherwise there is no reply: a reply the passage
might not give is worse than none. The sentence judged is the answer's own (checked) sentence
that holds most of the question's terms, so the reply rests on what the person reads.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

from rag_system.chunking.sentences import split_sentences
from rag_system.generation.llm import GenerationParams, LLMBackend, LLMError, Message
from rag_system.grounding.terms import coverage, held_by_meaning, strip_markers, weighted_terms

log = logging.getLogger(__name__)

#: Words that turn a sentence's statement to its opposite; a "No" needs one, a "Yes" none.
NEGATION = re.compile(r"\b(?:not|no|never|nothing|none|nobody|neither|nor|without|cannot)\b|n['\u2019]t\b",
                      re.IGNORECASE)
#: A sentence must hold this share of the question's weighted terms (`terms.held_by_meaning`) to be
#: judged: at a third, one word of a three-word question was enough, and the model said "No" to
#: "there is no fallback reranker" for "Is the reranker switched on out of the box?".
MIN_SHARE = 0.5
#: Longer sentences are cut: the reply rests on the sentence's start, and the prompt stays small.
MAX_CHARS = 400
#: A "Yes" must come from a sentence that holds this share of the question's terms (it restates it).
YES_SHARE = 0.75
#: Sentences judged at most, one short prompt each (~1 s apiece on 2 cores).
MAX_JUDGED = 3
_LIST_MARK = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)])\s+")
_REPLY_WORD = re.compile(r"\b(yes|no)\b", re.IGNORECASE)


@dataclass(frozen=True)
class ModelReply:
    """`reply`: "yes" | "no" | None; `sentence`: the answer sentence judged; `usage`: tokens spent."""

    reply: str | None
    sentence: str
    usage: dict[str, int]


def answering_sentences(question: str, answer: str) -> list[str]:
    """The answer's sentences that hold at least `MIN_SHARE` of the question's weighted terms (in any
    form of the word, `terms.held_by_meaning`), the most first (the first of equals first), at most
    `MAX_JUDGED`; none for a question without terms."""
    if not weighted_terms(question):
        return []
    scored: list[tuple[float, int, str]] = []
    for line in strip_markers(answer).splitlines():
        for sentence in split_sentences(_LIST_MARK.sub("", line)):
            held = held_by_meaning(question, sentence)
            if held >= MIN_SHARE and all(sentence != s for _, _, s in scored):
                scored.append((held, -len(scored), sentence))
    return [s[:MAX_CHARS] for _, _, s in sorted(scored, reverse=True)[:MAX_JUDGED]]


def judge_prompt(question: str, sentence: str) -> list[Message]:
    """No system rules: the answering prompt's rules made the model say "Yes" to denials."""
    return [Message("user", f"Passage: {sentence}\n\nQuestion: {question}\n\n"
                            "According to the passage, is the answer to the question yes or no? "
                            "Reply with one word: Yes, No, or Unknown if the passage does not answer it.")]


def model_reply(question: str, answer: str, backend: LLMBackend, model: str | None = None) -> ModelReply:
    """Ask `backend`, sentence by sentence (most of the question's terms first), whether the answer's
    sentences say yes or no to `question`.

    A verdict counts only where it keeps to its sentence's polarity: a "No" from a sentence that
    negates what the question asks positively, a "Yes" from one that does not. Verdicts that
    disagree give no reply. A "Yes" counts only from a sentence holding `YES_SHARE` of the
    question's terms: on the negation rows the model said "Yes" to sentences about something else
    ("StartupXYZ uses 47 open-source libraries" for "Did the review find copyleft problems?"), so a
    "Yes" from a sentence holding less is no reply, and does not stop a "No" from a sentence that
    negates ("For the Stateless Reset to appear as a valid QUIC packet ..." was judged "Yes" before
    "Note that Stateless Resets do not have any cryptographic protection" was judged "No")."""
    verdicts: list[tuple[str, str]] = []
    usage = {"prompt": 0, "completion": 0}
    for sentence in answering_sentences(question, answer):
        try:
            done = backend.complete(judge_prompt(question, sentence), GenerationParams(max_tokens=3, model=model))
        except LLMError as exc:
            log.warning("reply judge failed: %s", exc)
            return ModelReply(None, "", usage)
        usage = {"prompt": usage["prompt"] + done.prompt_tokens,
                 "completion": usage["completion"] + done.completion_tokens}
        said = _REPLY_WORD.match(done.text.strip())
        if said is None:
            continue
        reply = said.group(1).lower()
        opposite = bool(NEGATION.search(sentence)) != bool(NEGATION.search(question))
        if (reply == "no") != opposite:
            log.debug("reply judge's %s against the polarity of %r", reply, sentence)
            continue
        verdicts.append((reply, sentence))
        if reply == "no":
            break  # the sentences holding more of the question were judged first
    restated = [sentence for reply, sentence in verdicts
                if reply == "yes" and coverage(question, [sentence])[0] >= YES_SHARE]
    denied = [sentence for reply, sentence in verdicts if reply == "no"]
    if denied:
        return ModelReply(None, "", usage) if restated else ModelReply("no", denied[0], usage)
    return ModelReply("yes", restated[0], usage) if restated else ModelReply(None, "", usage)
