"""Document ids: a file's sha256, or `<sha256>-<n>` for part n of it (a mailbox's message).

`documents_where` is checked against a real LanceDB table of ids near the boundaries of its range
(the same hex prefix followed by other characters, another file's parts, a longer number), by
comparing what its range selects with a plain prefix test, for random sets of asked ids.
"""

from __future__ import annotations

from pathlib import Path

import lancedb
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from common.document_ids import file_id, part_id, part_number
from rag_system.indexing.store import documents_where
from rag_system.retrieval.filters import compile_filters

A, B = "a" * 64, "ab" * 32


def test_part_ids_round_trip() -> None:
    assert part_id(A, 3) == f"{A}-3" and file_id(part_id(A, 3)) == A and part_number(part_id(A, 12)) == 12
    assert file_id(A) == A and part_number(A) == 0
    for not_a_part in (f"{A}-0", f"{A}-x", f"{A[:-1]}-2", "doc-2", f"{A}-2-3", f"{A.upper()}-2"):
        assert file_id(not_a_part) == not_a_part and part_number(not_a_part) == 0
    with pytest.raises(ValueError):
        part_id(A, 0)


def test_short_or_foreign_ids_are_matched_exactly() -> None:
    assert documents_where(["a", "doc-1"]) == "document_id IN ('a', 'doc-1')"
    assert documents_where([]) == "false"
    assert compile_filters({"document_id": ["a", "b"]}) == "(document_id IN ('a', 'b'))"
    assert "document_id >= '" + A + "-'" in documents_where([A])


IDS = [A, part_id(A, 1), part_id(A, 2), part_id(A, 10), f"{A}.", f"{A}_x", f"{A}-", f"{A}--1", A[:-1] + "b",
       B, part_id(B, 1), "doc-1", "a"]


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    db = lancedb.connect(Path(tmp_path_factory.mktemp("ids")))
    return db.create_table("ids", pa.table({"document_id": IDS}))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(IDS), min_size=1, max_size=4))
def test_a_file_id_selects_itself_and_its_parts_nothing_else(table, asked: list[str]) -> None:  # type: ignore[no-untyped-def]
    got = set(table.search().where(documents_where(asked)).limit(None).to_arrow()
              .column("document_id").to_pylist())
    # The range is "starts with `<sha256>-`": every part, and nothing of another id that shares the hex.
    wanted = {i for i in IDS if i in asked or any(len(a) == 64 and i.startswith(a + "-") for a in asked)}
    assert got == wanted
    assert {part_id(A, 1), part_id(A, 10)} <= got if A in asked else part_id(A, 1) not in got or part_id(A, 1) in asked


def test_the_gateway_shows_a_message_under_its_uploaded_name() -> None:
    from backend.handlers_chat import display_names

    sha = "0123456789abcdef" * 4
    cited = {"document_id": part_id(sha, 2), "document_name": f"{sha}_team.mbox"}
    other = {"document_id": part_id(A, 2), "document_name": f"{sha}_team.mbox"}  # another file's name: kept
    shown = display_names({"citations": [cited, other], "source_documents": [cited]})
    assert [c["document_name"] for c in shown["citations"]] == ["team.mbox", f"{sha}_team.mbox"]
    assert shown["source_documents"][0]["document_name"] == "team.mbox"
