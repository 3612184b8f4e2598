"""Where a citation points a reader outside the app: its document and page in words, and a link.

Shared by what leaves the gateway as text — an exported conversation (backend/session_export.py)
and the OpenAI-compatible door's sources (backend/handlers_openai.py) — so both name a source and
link to it the same way: a PDF's page image with the cited sentence highlighted, or the original
file for any other format (which has no pages to draw).
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

_STORED_PREFIX = re.compile(r"^[0-9a-f]{64}_")
_HIGHLIGHT_CHARS = 300


def document_name(c: dict[str, Any]) -> str:
    return _STORED_PREFIX.sub("", str(c.get("document_name") or "document"))


def page_of(c: dict[str, Any]) -> int | None:
    """The page of the cited sentence (`location.page`), else the passage's first page."""
    page = (c.get("location") or {}).get("page") or c.get("page_start")
    return int(page) if isinstance(page, int) or (isinstance(page, str) and page.isdigit()) else None


def where(c: dict[str, Any]) -> str:
    """"policy.pdf, p. 3" (a text file without pages: its name)."""
    name, page = document_name(c), page_of(c)
    paged = name.lower().endswith(".pdf") or (c.get("location") or {}).get("paged")
    return f"{name}, p. {page}" if page and paged else name


def link(c: dict[str, Any], base_url: str) -> str:
    doc = quote(str(c.get("document_id") or ""), safe="")
    page = page_of(c)
    if document_name(c).lower().endswith(".pdf") and page:
        url = f"{base_url}/documents/{doc}/pages/{page}.png"
        text = " ".join(str(c.get("quote") or "").split())
        return url + (f"?highlight={quote(text[:_HIGHLIGHT_CHARS], safe='')}" if text else "")
    return f"{base_url}/documents/{doc}/file"
