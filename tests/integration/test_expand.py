"""Neighbour expansion on a real LanceDB index built by the real builder.

Why: expanded passages are what the LLM reads and cites, so on real chunks
(small CHUNK_SIZE, one-sentence overlap, form-feed pages, heading context
lines) every sentence of the span must appear exactly once and in order,
pages must widen, overlapping windows must merge at the better rank, the
neighbours must come from one table query, and hostile ids must stay data.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from rag_system.chunking.sentences import split_sentences
from rag_system.indexing.builder import build_index
from rag_system.indexing.store import ChunkTable, connect
from rag_system.retrieval.expand import ExpansionError, expand_neighbours, neighbour_filter, overlap_length
from rag_system.retrieval.first_stage import COLUMNS
from rag_system.retrieval.types import Candidate

FRUITS = ["apples", "pears", "plums", "cherries", "figs", "dates", "grapes", "limes", "mangoes", "kiwis",
          "lemons", "melons", "olives", "peaches", "quinces", "berries", "guavas", "papayas"]
SENTENCES = [f"Sentence {i} says that the orchard on hill {i} grows {fruit} in long straight rows."
             for i, fruit in enumerate(FRUITS)]
PAGES = [" ".join(SENTENCES[0:6]), " ".join(SENTENCES[6:12]), " ".join(SENTENCES[12:])]
RULES = " ".join(f"Care rule {i} asks for water on day {i} before noon." for i in range(12))
GUIDE = f"# Guide\n\n## Care\n\n{RULES}\n"


def _build(tmp_path_factory, embedder, name: str, context: str) -> ChunkTable:  # type: ignore[no-untyped-def]
    from rag_system.config import load_settings

    root = tmp_path_factory.mktemp(f"expand-{name}")
    folder = root / "docs"
    folder.mkdir()
    (folder / "orchard.txt").write_text("\f".join(PAGES))
    (folder / "guide.md").write_text(GUIDE)
    (folder / "other.txt").write_text("A lone note about penguins.")
    settings = load_settings(environ={"DOCENT_DATA_DIR": str(root / "data"), "CHUNK_SIZE": "48",
                                      "CHUNK_CONTEXT": context}, dotenv_path=None)
    build_index([folder], name, settings, embedder=embedder)
    return ChunkTable.open(connect(settings.resolved_lancedb_uri), name, embedder.identity)


@pytest.fixture(scope="module")
def table(tmp_path_factory, embedder) -> ChunkTable:  # type: ignore[no-untyped-def]
    return _build(tmp_path_factory, embedder, "plain", "none")


@pytest.fixture(scope="module")
def headed(tmp_path_factory, embedder) -> ChunkTable:  # type: ignore[no-untyped-def]
    return _build(tmp_path_factory, embedder, "headed", "headings")


def chunks(table: ChunkTable, name: str) -> list[Candidate]:
    rows = table.table.search().where(f"document_name = '{name}'").select(COLUMNS).limit(None).to_list()
    return [Candidate(**{c: r[c] for c in COLUMNS}) for r in sorted(rows, key=lambda r: r["chunk_index"])]


def sentence_numbers(text: str) -> list[int]:
    return [int(m) for m in re.findall(r"Sentence (\d+) says", text)]


def test_the_fixture_has_overlapping_multi_page_chunks(table: ChunkTable) -> None:
    orchard = chunks(table, "orchard.txt")
    assert len(orchard) >= 6
    assert orchard[-1].page_end == 3
    first, second = orchard[0].text, orchard[1].text
    assert second.startswith(split_sentences(first)[-1])  # the chunker's one-sentence overlap
    assert overlap_length(first, second) == len(split_sentences(first)[-1])


def test_window_joins_neighbours_without_repeating_the_overlap(table: ChunkTable) -> None:
    orchard = chunks(table, "orchard.txt")
    i = next(i for i in range(1, len(orchard) - 1) if orchard[i + 1].page_end > orchard[i - 1].page_start)
    middle = orchard[i]  # its window crosses a page break
    [out] = expand_neighbours(table, [middle], window=1)
    expected = sorted(set(sum((sentence_numbers(c.text) for c in orchard[i - 1:i + 2]), [])))
    assert sentence_numbers(out.text) == expected  # each sentence once, in document order
    for number in expected:
        assert SENTENCES[number] in out.text  # verbatim, so citations can quote it
    assert out.page_start == orchard[i - 1].page_start < out.page_end == orchard[i + 1].page_end
    assert (out.chunk_id, out.chunk_index, out.score) == (middle.chunk_id, middle.chunk_index, middle.score)
    meta = json.loads(out.metadata)
    assert meta["span"] == [i - 1, i + 1] and meta["span_chunk_ids"] == [c.chunk_id for c in orchard[i - 1:i + 2]]
    assert meta["merged_chunk_ids"] == [middle.chunk_id]
    assert meta["file_type"] == "txt"  # the chunk's own metadata survives


def test_overlapping_windows_merge_at_the_better_rank(table: ChunkTable) -> None:
    orchard = chunks(table, "orchard.txt")
    [other] = chunks(table, "other.txt")
    ranked = [other, orchard[5], orchard[2], orchard[0]]  # windows of 0 (0..1) and 2 (1..3) overlap
    out = expand_neighbours(table, ranked, window=1)
    assert [c.chunk_id for c in out] == [other.chunk_id, orchard[5].chunk_id, orchard[2].chunk_id]
    assert out[0].text == other.text  # a one-chunk document has no neighbours
    assert json.loads(out[1].metadata)["span"] == [4, 6]
    merged = json.loads(out[2].metadata)
    assert merged["span"] == [0, 3]
    assert merged["merged_chunk_ids"] == [orchard[2].chunk_id, orchard[0].chunk_id]  # best rank first
    numbers = sentence_numbers(out[2].text)
    assert numbers == list(range(numbers[-1] + 1))  # sentences 0..n, each once, in order
    assert out[2].score == orchard[2].score and out[2].chunk_index == 2


def test_first_chunk_and_zero_window(table: ChunkTable) -> None:
    orchard = chunks(table, "orchard.txt")
    [edge] = expand_neighbours(table, [orchard[0]], window=2)
    assert json.loads(edge.metadata)["span"] == [0, 2]
    same = expand_neighbours(table, orchard[:3], window=0)
    assert [c.text for c in same] == [c.text for c in orchard[:3]]
    assert expand_neighbours(table, [], window=3) == []
    with pytest.raises(ExpansionError):
        expand_neighbours(table, orchard[:1], window=-1)


def test_repeated_heading_context_lines_are_dropped(headed: ChunkTable) -> None:
    guide = chunks(headed, "guide.md")
    assert len(guide) >= 3 and all(c.text.startswith("Guide > Care\n") for c in guide)
    [out] = expand_neighbours(headed, [guide[1]], window=1)
    assert out.text.count("Guide > Care") == 1 and out.text.startswith("Guide > Care\n")
    rules = [int(m) for m in re.findall(r"Care rule (\d+) asks", out.text)]
    assert rules == sorted(set(rules)) and len(rules) >= 4


class _CountingTable:
    """A pass-through around the real LanceDB table that counts `search` calls."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.searches = inner, 0

    def search(self, *args: Any, **kwargs: Any) -> Any:
        self.searches += 1
        return self.inner.search(*args, **kwargs)


def test_one_query_per_call_and_hostile_ids_stay_data(table: ChunkTable) -> None:
    orchard = chunks(table, "orchard.txt")
    counting = _CountingTable(table.table)
    spy = ChunkTable(table.db, table.index, counting)
    evil = Candidate(chunk_id="x", document_id="x' OR '1'='1", document_name="evil", chunk_index=0,
                     page_start=1, page_end=1, heading_path="", block_type="paragraph", text="evil",
                     metadata="{}")
    out = expand_neighbours(spy, [orchard[1], orchard[5], evil], window=1)
    assert counting.searches == 1
    assert out[2].text == "evil" and json.loads(out[2].metadata)["span"] == [0, 0]
    assert neighbour_filter([("a'b", 0, 2)]) == "(document_id = 'a''b' AND chunk_index BETWEEN 0 AND 2)"
