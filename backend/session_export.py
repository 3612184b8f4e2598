"""A conversation as Markdown: every question, its answer with `[n]` markers, and where each came from.

An answer is only as good as the pages it cites, so the export keeps them: under each answer a
numbered list of its citations, each naming the document and page and linking to the gateway's
image of that page with the cited sentence highlighted (a PDF), or to the original file (any
other format, which has no pages to draw: Documentation/api-gateway.md "Page images"). Links
are absolute (`base_url`), so the file works wherever it is opened, for anyone who may read the
documents. A turn that failed or was stopped says so instead of passing for an answer.
"""

from __future__ import annotations

from typing import Any

from backend.citation_links import link, where

#: How a stored answer's source reads in the export (the web app's badge words, js/labels.js).
SOURCE_WORDS = {"llm": "Answer from the documents", "llm_repaired": "Answer from the documents (repaired)",
                "extractive": "Quoted from the documents", "mixed": "Partly quoted", "refusal": "Not in the documents",
                "direct": "Not from the documents", "clarification": "Which document?"}
_QUOTE_CHARS = 160


def session_markdown(session: dict[str, Any], messages: list[dict[str, Any]], base_url: str,
                     exported_at: str) -> str:
    turns = _turns(messages)
    lines = [f"# {_one_line(session.get('title') or 'Conversation')}", "",
             f"Exported from Docent on {exported_at[:16].replace('T', ' ')} UTC · "
             f"{len(turns)} question{'s' if len(turns) != 1 else ''}", ""]
    for number, (question, answer) in enumerate(turns, start=1):
        lines += [f"## {number}. {_one_line(question)}", ""]
        if answer is None:
            lines += ["*No answer was saved for this question.*", ""]
            continue
        lines += _answer(answer, base_url)
    return "\n".join(lines).rstrip() + "\n"


def _turns(messages: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any] | None]]:
    """(question, its answer) in the order asked; the turn id pairs them (two questions may interleave)."""
    answers = {m["turn_id"]: m for m in messages if m["sender"] == "assistant"}
    return [(m["content"], answers.get(m["turn_id"])) for m in messages if m["sender"] == "user"]


def _answer(message: dict[str, Any], base_url: str) -> list[str]:
    meta = message.get("metadata") or {}
    status = meta.get("status") or "complete"
    lines = [message.get("content", "").strip(), ""]
    if status != "complete":
        lines += [f"*This answer is incomplete ({'stopped' if status == 'cancelled' else 'failed'}).*", ""]
    source = SOURCE_WORDS.get(str(meta.get("answer_source") or ""))
    if source:
        lines += [f"*{source}*", ""]
    citations = [c for c in meta.get("citations") or [] if isinstance(c, dict)]
    if citations:
        lines += ["Sources:", ""]
        lines += [_citation(c, base_url) for c in citations]
        lines.append("")
    return lines


def _citation(c: dict[str, Any], base_url: str) -> str:
    quote_text = " ".join(str(c.get("quote") or "").split())
    shown = quote_text if len(quote_text) <= _QUOTE_CHARS else quote_text[: _QUOTE_CHARS - 1].rstrip() + "…"
    tail = f" — “{shown}”" if shown else ""
    return f"- [{c.get('n', '?')}] [{_escape(where(c))}]({link(c, base_url)}){tail}"


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _escape(text: str) -> str:
    """Link text that cannot close the link early."""
    return text.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")
