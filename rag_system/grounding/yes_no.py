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
from rag_system.grounding.verifier import Source, answer_to
from rag_system.retrieval.evidence import EvidenceBlock


def sources_answer(question: str, blocks: list[EvidenceBlock]) -> str | None:
    """"yes" | "no" for a yes/no question the blocks answer; None otherwise."""
    if not blocks or not is_yes_no(question):
        return None
    return answer_to(question, [Source(b.number, b.source_text, b.candidate.document_name,
                                       b.candidate.heading_path) for b in blocks])


def with_reply(text: str, reply: str | None) -> str:
    """`text` opening with the reply ("No. ..."; on a line of its own before a list), unless it has
    one or there is none to give."""
    body = text.lstrip()
    if not reply or re.match(r"(?:yes|no)\b", body, re.IGNORECASE):
        return text
    if body.startswith(("- ", "* ", "1.")):
        return f"{reply.capitalize()}.\n{body}"
    return f"{reply.capitalize()}. {body}"
