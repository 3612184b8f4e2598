"""Topic breaks: lexical cohesion at paragraph starts, and where a full chunk ends."""

from __future__ import annotations

from pathlib import Path

from rag_system.chunking.chunker import ChunkerOptions, chunk_document
from rag_system.chunking.cohesion import best_break, gap_cohesion
from rag_system.ingestion.types import Block, ConvertedDocument

FLOAT = ("Floating point numbers are stored in binary, so decimal fractions such as 0.1 are "
         "approximated and floating point sums drift.")
FLOAT_MORE = "Rounding floating point values before printing hides the binary approximation of decimal fractions."
COPY = ("Use copy.copy for a shallow copy of an object and copy.deepcopy when nested objects "
        "must be copied too.")
COPY_MORE = "A shallow copy shares nested objects; deepcopy copies nested objects recursively."


def words(texts: list[str]) -> list[int]:
    return [len(t.split()) for t in texts]


def test_cohesion_is_high_within_a_topic_and_low_across_one() -> None:
    values = gap_cohesion([FLOAT, FLOAT_MORE, COPY, COPY_MORE], [True, True, True, True], span=15)
    assert values[0] is None  # nothing before the first unit
    within, across = values[1], values[2]
    assert within is not None and across is not None
    assert across < 0.1 < within
    assert gap_cohesion(["a b", "c d"], [True, False])[1] is None  # only paragraph starts are gaps


def test_best_break_takes_the_lowest_cohesion_in_the_allowed_range() -> None:
    cohesion = [None, 0.5, 0.1, None, 0.3, 0.4]  # gaps before units 1..4, then the incoming unit
    sizes = [10, 10, 10, 10, 10]
    assert best_break(cohesion, sizes, earliest=1, min_tokens=0, room=100) == 2
    assert best_break(cohesion, sizes, earliest=1, min_tokens=25, room=100) == 4  # 2 holds only 20 before it
    assert best_break(cohesion, sizes, earliest=3, min_tokens=0, room=100) == 4
    assert best_break(cohesion, sizes, earliest=1, min_tokens=0, room=5) == 5  # only the end leaves room
    assert best_break([None, None, None], [5, 5], earliest=1, min_tokens=0, room=50) is None
    assert best_break([None, 0.2, 0.2], [5, 5], earliest=1, min_tokens=0, room=50) == 2  # ties: the latest


def test_topic_breaks_start_the_next_chunk_where_the_answer_starts() -> None:
    blocks = [Block(text, 1) for text in (FLOAT, FLOAT_MORE, COPY, COPY_MORE)]
    document = ConvertedDocument(path=Path("/x/faq.md"), name="faq.md", file_type="md", page_count=1,
                                 blocks=tuple(blocks))
    budget = len(" ".join((FLOAT, FLOAT_MORE, COPY)).split())  # the edge falls after COPY's paragraph
    greedy = chunk_document(document, "d" * 64, words, ChunkerOptions(budget, 0))
    topical = chunk_document(document, "d" * 64, words, ChunkerOptions(budget, 0, topic_breaks=True))
    assert greedy[1].text == COPY_MORE  # the copy answer is cut in two
    assert [c.text for c in topical] == [f"{FLOAT}\n{FLOAT_MORE}", f"{COPY}\n{COPY_MORE}"]
    assert ChunkerOptions(budget, topic_breaks=True).version.endswith("-tb")


def test_window_at_topics_adds_vector_only_windows_at_topic_starts(tmp_path: Path) -> None:
    import lancedb

    from rag_system.indexing.windows import WindowTable

    intro = "Floating point sums drift because decimal fractions are binary approximations."  # 10 words
    blocks = [Block(text, 1) for text in (intro, COPY, COPY_MORE)]
    document = ConvertedDocument(path=Path("/x/faq.md"), name="faq.md", file_type="md", page_count=1,
                                 blocks=tuple(blocks))
    plain = ChunkerOptions(100, 0, window_tokens=32, topic_breaks=True)
    [chunk] = chunk_document(document, "d" * 64, words, plain)
    # COPY opens mid-window: too early in the first window to end it there
    assert [w.split()[0] for w in chunk.windows] == ["Floating", "A"] and chunk.vector_only_windows == 0
    [extra] = chunk_document(document, "d" * 64, words, ChunkerOptions(100, 0, window_tokens=32, topic_breaks=True,
                                                                        window_at_topics=0.1))
    assert extra.windows[:2] == chunk.windows
    assert extra.windows[2] == f"{COPY}\n{COPY_MORE}" and extra.vector_only_windows == 1
    assert extra.chunk_id != chunk.chunk_id  # the chunker version says so
    table = WindowTable.create(lancedb.connect(tmp_path), "w")
    table.add(["d" * 64], "faq.md", [extra])
    assert table.table.count_rows() == 2  # the topic window is embedded, not full-text indexed
