"""The grounded prompt and the repair prompt.

Why this wording: small instruction models (0.5B-1.5B) follow short, concrete
rules. The rules name the exact citation form the validator parses (`[n]`
after each sentence), and the refusal is one fixed sentence so it can be
recognised reliably. The refusal rule comes last and is conditioned on "no
source is about the question": an earlier, more prominent wording made the
1.5B model refuse questions its sources answered (the ack_delay_exponent
default, rfc_q01), while this one answers it and still refuses rfc_q02, whose
fact was not in the evidence.
"""

from __future__ import annotations

import re

from rag_system.generation.language import is_translated_refusal, language_rule
from rag_system.generation.llm import Message
from rag_system.retrieval.evidence import EvidenceBlock

REFUSAL_TEXT = "The documents do not contain enough information to answer this question."

SYSTEM_PROMPT = (
    "You are Docent. Answer the question using the numbered sources the user gives you.\n"
    "Write one to three short sentences. Use the words of the source that answers. After each sentence "
    "put the number of the source it comes from in square brackets, like [1].\n"
    "Example. Sources: [1] lease.pdf, p. 2: The tenant must give 60 days' written notice. "
    "Question: How much notice does the tenant give? Answer: The tenant must give 60 days' written notice [1].\n"
    f"Use only what the sources say. If no source is about the question, reply exactly: {REFUSAL_TEXT}"
)


def grounded_messages(question: str, evidence: str, history: str = "") -> list[Message]:
    """System rules, then the sources, then the question (recency helps small models)."""
    parts = [f"Sources:\n\n{evidence}"]
    if history:
        parts.append(f"Earlier in this conversation:\n{history}")
    rule = language_rule(question)
    parts.append(f"Question: {question}" + (f"\n{rule}" if rule else ""))
    return [Message("system", SYSTEM_PROMPT), Message("user", "\n\n".join(parts))]


#: A representative prompt for warming a model at start-up (it matches the real prompts' system part).
_WARM_EVIDENCE = ("[1] example.pdf, p. 1\nThe notice period is thirty (30) days from the date of the written "
                  "notice. Either party may terminate this agreement for convenience. The supplier must "
                  "return all confidential material within ten business days after termination.\n\n"
                  "[2] example.pdf, p. 2\nInvoices are payable within 45 days. Late payments accrue "
                  "interest at 1.5% per month. Disputed amounts must be raised in writing before the due date.")


def warm_up_messages() -> list[Message]:
    return grounded_messages("What is the notice period?", _WARM_EVIDENCE)


def repair_messages(question: str, evidence: str, answer: str, problems: list[str]) -> list[Message]:
    """Show the model its own answer and the validator's findings, ask for a fixed version."""
    listed = "\n".join(f"- {p}" for p in problems)
    user = (f"Sources:\n\n{evidence}\n\nQuestion: {question}\n\nYour previous answer:\n{answer}\n\n"
            f"It has these problems:\n{listed}\n\n"
            "Rewrite the answer so that every sentence is supported by the sources and ends with "
            "the number of its source in square brackets, like [1]. Only use source numbers that exist. "
            "Only quote text that appears word for word in the source. "
            f"If the sources do not answer the question, reply exactly: {REFUSAL_TEXT}\n"
            + (f"{rule}\n" if (rule := language_rule(question)) else "") + "Answer:")
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
    return bool(_REFUSAL_PATTERNS.search(answer.strip())) or is_translated_refusal(answer)


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


def strip_labels(text: str, blocks: list[EvidenceBlock]) -> str:
    """Remove evidence labels and context lines a small model copied into its answer.

    The 0.5B model sometimes "answers" with `[1] RFC 9312 ..., p. 1`; such a
    line names a source but says nothing, and would pass validation as a cited
    sentence. Only exact copies are removed, so real prose is never touched.
    """
    for block in blocks:
        text = text.replace(block.label, " ")
        # the label without its number opening a line ("falcons.pdf, p. 1-2 Peregrines dive ..."),
        # as the 1.5B model also copies it; inside a sentence ("according to ...") it is prose
        where = block.label.split("] ", 1)[-1]
        text = re.sub(rf"(?m)^(\s*(?:[-*]\s+)?){re.escape(where)}(?:\s*[:\-–]\s*|\s+)", r"\1", text)
        context = block.candidate.document_name + " > "
        text = "\n".join(line for line in text.split("\n") if not line.strip().startswith(context))
    return text.strip()
