"""The "Yes" or "No" an answer to a yes/no question opens with, as the passages give it.

Why: asked "Is the job guaranteed to run?", a quote ("No guarantee is made that the job runs [1]")
or a model answer that restates the passage holds the answer but never says "no", and a person
reading fast takes the wrong one. The question is read as a claim and checked against the
passages (`grounding.verifier.answer_to`): when they deny it the answer opens "No.", when one
clause states it, "Yes."; when they do neither, no reply is put in the passages' mouth.
"""

from __future__ import annotations

import re

from rag_system.generation.answer_rules import cited_numbers
from rag_system.generation.language import question_language
from rag_system.grounding.questions import plain_question
from rag_system.grounding.replies import split_reply
from rag_system.grounding.terms import is_yes_no
from rag_system.grounding.verifier import Source, answer_to, strip
from rag_system.retrieval.evidence import EvidenceBlock

#: An answer that already opens with its reply.
REPLY = re.compile(r"\s*(?:yes|no)\b", re.IGNORECASE)
_WORD = re.compile(r"[^\W\d_]+")


def sources_answer(question: str, blocks: list[EvidenceBlock], answer: str = "") -> str | None:
    """"yes" | "no" for a yes/no question the blocks answer; None otherwise (`sources_reading`)."""
    return sources_reading(question, blocks, answer)[0]


def sources_reading(question: str, blocks: list[EvidenceBlock], answer: str = "") -> tuple[str | None, bool]:
    """("yes" | "no" | None, open): the reply the blocks give a yes/no question, and whether the
    question is left open for another reader (`generation.replying`): an English yes/no question
    that neither the blocks nor the answer settle, and on which they do not disagree.

    `answer`: the checked answer the blocks back (its quotes, or model sentences the verifier passed
    against them). When the blocks do not settle the question in the question's own words, the
    answer's sentences may: they are the passage's sentences picked for it, or restate them in words
    nearer the question's ("does not return the sorted list" for "Does list.sort() hand back the
    sorted list?"). The same rules hold: a "no" where one sentence denies what was asked, a "yes"
    only where one sentence says all of it. When the two disagree (the passage's "may carry over up to
    five days" reads as a yes to "Can staff carry over leave?", an answer's "cannot be carried over"
    as a no), there is no reply, and the question is not open."""
    if not blocks or not is_yes_no(plain_question(question)) or question_language(question) != "en":
        return None, False
    said = answer_to(question, [Source(b.number, b.source_text, b.candidate.document_name,
                                       b.candidate.heading_path) for b in blocks])
    quoted = answer_to(question, [Source(1, strip(answer))]) if answer.strip() else None
    if said is not None and quoted is not None and quoted != said:
        return None, False  # the blocks and the sentences picked from them disagree: no reply is safer
    reply = said or quoted
    if not is_yes_no(question):
        # "Can it export to CSV, or only to JSON?": "Yes" says the first holds; a "No" could deny
        # either, so it is left to the sentences after it
        return ("yes" if reply == "yes" else None), False
    return reply, reply is None


def unsettled_reply_dropped(question: str, text: str, settled: str | None) -> str:
    """A model's `text` without the "Yes"/"No" it opens with, when nothing checks that reply: an English
    yes/no question the passages it read do not settle (`settled`: `sources_answer` over them).

    The verifier checks the words after a reply, and the reply only where the passages settle the
    question; otherwise "No. The index is guarded against ... so a rebuild does not raise [1]" went out
    with its "No" unchecked (docs_d16: right by luck, backed by a sentence about something else). The
    reply is then left to the rules and the reply judge (`generation.replying`), which read the
    sentences after it. A bare reply ("Yes, there is [2].") is kept, for the verifier to refuse."""
    if settled is not None or not is_yes_no(question) or question_language(question) != "en":
        return text
    reply, rest = split_reply(text.lstrip())
    if reply is None or len(_WORD.findall(strip(rest))) < 3:
        return text
    rest = rest.lstrip()
    return rest[:1].upper() + rest[1:]


def backing_only(question: str, text: str, reply: str | None) -> str:
    """A quoted list cut to the items that give `reply` on their own and the items quoted from the same
    blocks, when one item gives it, so the "No." is followed by the passage that says no. In the web
    app, "Did the seller's counsel find that executing the deal breaches StartupXYZ's organizational
    documents?" got "No." over a letter's salutation and the agreement's preamble, quoted from other
    blocks for sharing the question's words; "does not violate any provision of the Company's
    organizational documents" came third. Quotes from other blocks that settle nothing are not
    evidence for the reply, and a person reading fast takes the first quote for its reason; the same
    block's other sentences are its context ("Therefore, list.sort() sorts the list in place" beside
    "it does not return the sorted list"). A list where no item settles it on its own stays whole."""
    items = text.strip().split("\n")
    if not reply or len(items) < 2 or not all(i.startswith("- ") for i in items):
        return text
    settling = [answer_to(question, [Source(1, strip(item[2:]))]) == reply for item in items]
    blocks = {n for item, settles in zip(items, settling) if settles for n in cited_numbers(item)}
    if not blocks:
        return text
    return "\n".join(item for item, settles in zip(items, settling) if settles or cited_numbers(item) & blocks)


def with_reply(text: str, reply: str | None) -> str:
    """`text` opening with the reply ("No. ..."; on a line of its own before a list), unless it has
    one or there is none to give."""
    body = text.lstrip()
    if not reply or REPLY.match(body):
        return text
    if body.startswith(("- ", "* ", "1.")):
        return f"{reply.capitalize()}.\n{body}"
    return f"{reply.capitalize()}. {body}"
