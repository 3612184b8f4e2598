"""Rated answers as evaluation rows: the JSONL that `eval.run_answers --gold` reads.

A rating says what a person thought of one answer; the export turns it into a regression row:
the question as `query` and what the answer must contain as `expected`. A down-voted answer's
comment is the expected text (the person said what was missing or wrong); an up-voted answer's
cited quotes are (the answer was right: asking again must cite the same facts). A rating that
gives neither — a down vote without a comment, an up vote on an answer with no citations — says
nothing a harness could check, so it is left out of the JSONL and counted (`skipped`).
"""

from __future__ import annotations

import json
from typing import Any

#: What a citation keeps in an exported row (the cited chunk, where it is, what it says).
_CITED = ("n", "chunk_id", "document_id", "document_name", "page_start", "page_end", "quote")


def snapshot(question: str, answer: dict[str, Any], indexes: list[str],
             options: dict[str, Any]) -> dict[str, Any]:
    """The rated turn as it stands now: what a rating row keeps with it."""
    meta = answer.get("metadata") or {}
    citations = [{k: c.get(k) for k in _CITED if k in c} for c in meta.get("citations") or [] if isinstance(c, dict)]
    return {"question": question, "answer": answer.get("content", ""), "answer_source": meta.get("answer_source"),
            "citations": citations, "indexes": indexes, "options": options, "turn_id": answer.get("turn_id"),
            "backend": meta.get("backend"), "model": meta.get("model")}


def expected_of(item: dict[str, Any]) -> list[str]:
    turn = item["turn"]
    if item["rating"] == "down":
        return [item["comment"]] if item["comment"].strip() else []
    quotes = [str(c.get("quote") or "").strip() for c in turn.get("citations") or []]
    return list(dict.fromkeys(q for q in quotes if q))


def row_of(item: dict[str, Any]) -> dict[str, Any] | None:
    """One evaluation row, or None when the rating gives nothing to check."""
    expected = expected_of(item)
    if not expected:
        return None
    turn = item["turn"]
    rater = item["rater"] or "single"
    return {"id": f"feedback:{item['message_id']}:{rater}", "query": turn.get("question", ""),
            "expected": expected, "match": "any",
            "dimensions": {"source": "feedback", "rating": item["rating"],
                           "answer_source": str(turn.get("answer_source") or "")},
            "rating": item["rating"], "comment": item["comment"], "answer": turn.get("answer", ""),
            "answer_source": turn.get("answer_source"), "cited_chunks": turn.get("citations") or [],
            "indexes": turn.get("indexes") or [], "options": turn.get("options") or {},
            "message_id": item["message_id"], "session_id": item.get("session_id"), "rated_at": item["updated_at"]}


def jsonl(items: list[dict[str, Any]]) -> tuple[str, int]:
    """The JSONL text and how many ratings were left out for giving nothing to check."""
    rows = [row_of(item) for item in items]
    kept = [r for r in rows if r is not None]
    text = "".join(json.dumps(r, ensure_ascii=False, default=str) + "\n" for r in kept)
    return text, len(rows) - len(kept)
