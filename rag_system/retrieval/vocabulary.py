"""Does an index mention a word at all? One full-text lookup per word.

Why: "What is the default TCP port of a PostgreSQL server?" over a folder of
RFCs retrieves passages about ports and servers, and a model asked to answer
from them answers from memory ("5432"). The question's own names are the
tell: when the index never mentions "PostgreSQL", no passage of it can
answer, however close the topic. The lookup uses the same full-text index
(and analyzer) as the first stage, so "Chrome's" finds "Chrome".
"""

from __future__ import annotations

from rag_system.indexing.store import ChunkTable
from rag_system.indexing.windows import TEXT_COLUMN
from rag_system.retrieval.fts_query import sanitize_fts_query


def mentions(table: ChunkTable, word: str) -> bool:
    """True when some chunk (or window) of `table` holds `word` under the full-text analyzer."""
    from lancedb.query import MatchQuery

    terms = sanitize_fts_query(word)
    if not terms:
        return True
    if table.windows is not None:
        search = table.windows.table.search(MatchQuery(terms, TEXT_COLUMN), query_type="fts")
    else:
        search = table.table.search(MatchQuery(terms, "text"), query_type="fts")
    return bool(search.select(["chunk_id", "_score"]).limit(1).to_list())


def unmentioned(tables: list[ChunkTable], words: list[str]) -> list[str]:
    """The words none of `tables` mentions, in order."""
    return [w for w in words if not any(mentions(t, w) for t in tables)]
