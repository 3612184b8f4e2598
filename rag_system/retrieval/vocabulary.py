"""Does an index mention a word at all? One full-text lookup per word.

Why: "What is the default TCP port of a PostgreSQL server?" over a folder of
RFCs retrieves passages about ports and servers, and a model asked to answer
from them answers from memory ("5432"). The question's own names are the
tell: when the index never mentions "PostgreSQL", no passage of it can
answer, however close the topic. The lookup uses the same full-text index
(and analyzer) as the first stage, so "Chrome's" finds "Chrome".
"""

from __future__ import annotations

import re

from rag_system.indexing.store import ChunkTable
from rag_system.indexing.windows import TEXT_COLUMN, match_query
from rag_system.retrieval.fts_query import sanitize_fts_query


#: Full-text hits read to find a compound ("Atlas-8") written out in a chunk.
COMPOUND_HITS = 50


def mentions(table: ChunkTable, word: str) -> bool:
    """True when some chunk (or window) of `table` holds `word` under the full-text analyzer.

    A compound of a name and a number ("Atlas-8", "1.4") is only mentioned
    where it is written out: the analyzer splits it, and "Atlas" and "8"
    apart are in a manual for the Atlas-7 with an 8-week schedule. So is a
    snake_case identifier ("ALLOWED_HOSTS", not "allowed hosts").
    """
    terms = sanitize_fts_query(word)
    if not terms:
        return True
    compound = len(terms.split()) > 1 or "_" in word
    if table.windows is not None:
        search = table.windows.table.search(match_query(terms, TEXT_COLUMN), query_type="fts")
        column = TEXT_COLUMN
    else:
        search = table.table.search(match_query(terms, "text"), query_type="fts")
        column = "text"
    if not compound:
        return bool(search.select(["chunk_id", "_score"]).limit(1).to_list())
    hits = search.select(["chunk_id", column, "_score"]).limit(COMPOUND_HITS).to_list()
    texts = [str(hit.get(column) or "") for hit in hits]
    if "_" in word:  # an identifier is only mentioned as written: "allowed hosts" is not ALLOWED_HOSTS
        written = re.compile(rf"(?<![\w]){re.escape(word.lower())}(?![\w])")
        return any(written.search(t.lower()) for t in texts)
    wanted = _joined(word)
    return any(wanted in c for t in texts for c in _compounds(t))


_TOKEN = re.compile(r"[A-Za-z0-9]+(?:[-/.][A-Za-z0-9]+)*")


def _joined(text: str) -> str:
    return re.sub(r"[\s\-/_]+", "", text.lower())


def _compounds(text: str) -> set[str]:
    """Tokens and neighbouring pairs, joined: "Atlas-7", "Atlas 7" and "ATLAS7" all give "atlas7"."""
    tokens = [_joined(t) for t in _TOKEN.findall(text)]
    return set(tokens) | {a + b for a, b in zip(tokens, tokens[1:])}


def unmentioned(tables: list[ChunkTable], words: list[str]) -> list[str]:
    """The words none of `tables` mentions, in order."""
    return [w for w in words if not any(mentions(t, w) for t in tables)]
