"""Turn any user string into a safe full-text query.

LanceDB's query parser gives meaning to quotes, colons, `+`, `-`, `AND`/`OR`
and brackets; a question such as `what does "ack_delay" mean?` must not break
the full-text leg. We keep only word tokens and hand them to a `MatchQuery`
(OR semantics, BM25-ranked), so there is no syntax left to inject.
"""

from __future__ import annotations

import re

_TOKEN = re.compile(r"\w+", re.UNICODE)
MAX_TERMS = 64
MAX_TERM_LENGTH = 40
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


def _pieces(tokens: list[str]) -> list[str]:
    """Japanese and Chinese write whole clauses without spaces, so one `\\w+` run can be a sentence:
    such a run is cut into pieces the index's ICU segmenter can still read, instead of dropped."""
    out: list[str] = []
    for token in tokens:
        if len(token) > MAX_TERM_LENGTH and _CJK.search(token):
            out.extend(token[i:i + MAX_TERM_LENGTH] for i in range(0, len(token), MAX_TERM_LENGTH))
        else:
            out.append(token)
    return out


def sanitize_fts_query(query: str) -> str:
    """Space-separated word tokens of `query`, de-duplicated, in order."""
    seen: dict[str, None] = {}
    for token in _pieces(_TOKEN.findall(query or "")):
        if len(token) > MAX_TERM_LENGTH or not any(ch.isalnum() for ch in token):
            continue
        key = token.lower()
        if key not in seen:
            seen[key] = None
        if len(seen) >= MAX_TERMS:
            break
    return " ".join(seen)
