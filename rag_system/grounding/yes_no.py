"""The "Yes" or "No" an answer to a yes/no question opens with, as the passages give it.

Why: asked "Is the job guaranteed to run?", a quote ("No guarantee is made that the job runs [1]")
or a model answer that restates the passage holds the answer but never says "no", and a person
reading fast takes the wrong one. The question is read as a claim and checked against the
passages (`grounding.verifier.answer_to`): when they deny it the answer opens "No.", when one
clause states it, "Yes."; when they do neither, no reply is put in the passages' mouth.
"""

from __future__ import annotations

import re

from rag_system.grounding.terms import is_yes_no
from rag_system.grounding.verifier import Source, answer_to, strip
from rag_system.retrieval.evidence import EvidenceBlock


def sources_answer(question: str, blocks: list[EvidenceBlock], answer: str = "") -> str | None:
    """"yes" | "no" for a yes/no question the blocks answer; None otherwise.

    `answer`: the checked answer the blocks back (its quotes, or model sentences the verifier passed
    against them). When the blocks do not settle the question in the question's own words, the
    answer's sentences may: they are the passage's sentences picked for it, or restate them in words
    nearer the question's ("does not return the sorted list" for "Does list.sort() hand back the
    sorted list?"). The same rules hold: a "no" where one sentence denies what was asked, a "yes"
    only where one sentence says all of it. When the two disagree (the passage's "may carry over up to
    five days" reads as a yes to "Can staff carry over leave?", an answer's "cannot be carried over"
    as a no), there is no reply."""
    if not blocks or not is_yes_no(question):
        return None
    said = answer_to(question, [Source(b.number, b.source_text, b.candidate.document_name,
                                       b.candidate.heading_path) for b in blocks])
    if not answer.strip():
        return said
    quoted = answer_to(question, [Source(1, strip(answer))])
    if said is not None and quoted is not None and quoted != said:
        return None  # the blocks and the sentences picked from them disagree: no reply is safer
    return said or quoted


def with_reply(text: str, reply: str | None) -> str:
    """`text` opening with the reply ("No. ..."; on a line of its own before a list), unless it has
    one or there is none to give."""
    body = text.lstrip()
    if not reply or re.match(r"(?:yes|no)\b", body, re.IGNORECASE):
        return text
    if body.startswith(("- ", "* ", "1.")):
        return f"{reply.capitalize()}.\n{body}"
    return f"{reply.capitalize()}. {body}"
