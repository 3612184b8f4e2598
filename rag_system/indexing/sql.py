"""SQL filter text for LanceDB: quoted values, IN lists, a document's rows.

Apart from store.py so every table of an index (chunks, windows, window
vectors, manifest) builds its filters the same way without the chunk schema.
"""

from __future__ import annotations

from collections.abc import Iterable

from common.document_ids import PART_SEPARATOR, may_have_parts


def sql_string(value: str) -> str:
    """Quote a value for a LanceDB SQL filter; never interpolate raw strings."""
    if not isinstance(value, str) or "\x00" in value:
        raise ValueError("filter values must be strings without NUL characters")
    return "'" + value.replace("'", "''") + "'"


def sql_in(column: str, values: Iterable[str]) -> str:
    quoted = ", ".join(sql_string(v) for v in values)
    return f"{column} IN ({quoted})" if quoted else "false"


def documents_where(document_ids: Iterable[str]) -> str:
    """Rows of these documents and, for a file's id, of its parts (`common/document_ids.py`).

    A part `<sha>-<n>` is found by the range `<sha>-` <= id < `<sha>.` ('.' follows '-'), which a
    BTREE index on `document_id` serves, where a LIKE pattern would read every row.
    """
    ids = list(dict.fromkeys(document_ids))
    if not ids:
        return "false"
    clauses = [sql_in("document_id", ids)]
    clauses.extend(f"(document_id >= {sql_string(i + PART_SEPARATOR)} AND document_id < {sql_string(i + '.')})"
                   for i in ids if may_have_parts(i))
    return clauses[0] if len(clauses) == 1 else "(" + " OR ".join(clauses) + ")"
