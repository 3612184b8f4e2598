"""Chunking rules: budget, sections, atomic tables/code, pages, overlap, stable ids."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from rag_system.chunking.chunker import ChunkerOptions, chunk_document
from rag_system.ingestion.types import Block, ConvertedDocument


def words(texts: list[str]) -> list[int]:
    """A whitespace token counter: exact and predictable for unit tests."""
    return [len(t.split()) for t in texts]


def doc(*blocks: Block) -> ConvertedDocument:
    pages = max((b.page for b in blocks), default=1)
    return ConvertedDocument(path=Path("/x/a.pdf"), name="a.pdf", file_type="pdf",
                             page_count=pages, blocks=tuple(blocks))


def sentence(i: int, n: int = 5) -> str:
    return " ".join([f"W{i}"] * (n - 1)) + " end."


def test_respects_budget_and_overlaps_one_sentence() -> None:
    text = " ".join(sentence(i) for i in range(10))  # 10 sentences x 5 tokens
    chunks = chunk_document(doc(Block(text, 1)), "d" * 64, words, ChunkerOptions(max_tokens=12))
    assert all(c.token_count <= 12 for c in chunks)
    for prev, nxt in zip(chunks, chunks[1:]):
        last = prev.text.split("end.")[-2].strip() + " end."
        assert nxt.text.startswith(last.strip())
    covered = " ".join(c.text for c in chunks)
    for i in range(10):
        assert f"W{i} " in covered


def test_no_overlap_when_disabled() -> None:
    text = " ".join(sentence(i) for i in range(6))
    chunks = chunk_document(doc(Block(text, 1)), "d" * 64, words, ChunkerOptions(12, 0))
    total = sum(len(c.text.split()) for c in chunks)
    assert total == 30


def test_chunks_never_cross_sections_and_carry_heading_path() -> None:
    chunks = chunk_document(doc(
        Block("Intro", 1, "heading", ("Intro",)),
        Block("First part. Short.", 1, "paragraph", ("Intro",)),
        Block("Methods", 2, "heading", ("Methods",)),
        Block("Second part.", 2, "paragraph", ("Methods",)),
    ), "d" * 64, words, ChunkerOptions(100))
    assert [c.heading_path for c in chunks] == ["Intro", "Methods"]
    assert chunks[0].text == "Intro\nFirst part. Short."
    assert (chunks[1].page_start, chunks[1].page_end) == (2, 2)


def test_tables_and_code_are_atomic_chunks() -> None:
    table = "| a | b |\n| 1 | 2 |\n| 3 | 4 |"
    chunks = chunk_document(doc(
        Block("Before the table.", 1),
        Block(table, 1, "table"),
        Block("def f():\n    return 1", 2, "code"),
        Block("After.", 2),
    ), "d" * 64, words, ChunkerOptions(100))
    kinds = [c.block_type for c in chunks]
    assert kinds == ["paragraph", "table", "code", "paragraph"]
    assert chunks[1].text == table


def test_oversized_table_is_split_by_rows_within_budget() -> None:
    table = "\n".join(f"| row {i} | value {i} |" for i in range(40))
    chunks = chunk_document(doc(Block(table, 3, "table")), "d" * 64, words, ChunkerOptions(30))
    assert len(chunks) > 1
    assert all(c.token_count <= 30 and c.block_type == "table" for c in chunks)
    assert "\n".join(c.text for c in chunks) == table


def test_page_span_follows_content() -> None:
    chunks = chunk_document(doc(Block("Page one text.", 1), Block("Page two text.", 2)),
                            "d" * 64, words, ChunkerOptions(100))
    assert len(chunks) == 1
    assert (chunks[0].page_start, chunks[0].page_end) == (1, 2)
    assert chunks[0].metadata["pages"] == [1, 2]


def test_ids_are_stable_and_depend_on_content_and_version() -> None:
    d = doc(Block("Hello world. Again here.", 1))
    a = chunk_document(d, "a" * 64, words, ChunkerOptions(100))
    b = chunk_document(d, "a" * 64, words, ChunkerOptions(100))
    c = chunk_document(d, "b" * 64, words, ChunkerOptions(100))
    e = chunk_document(d, "a" * 64, words, ChunkerOptions(99))
    assert [x.chunk_id for x in a] == [x.chunk_id for x in b]
    assert a[0].chunk_id != c[0].chunk_id != e[0].chunk_id


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 30), st.integers(1, 3), st.booleans()), min_size=1, max_size=25),
       st.integers(8, 40))
def test_budget_is_never_exceeded(spec: list[tuple[int, int, bool]], budget: int) -> None:
    blocks = [Block(" ".join(f"t{i}" for i in range(n)) + ".", page, "table" if tab else "paragraph")
              for n, page, tab in spec]
    chunks = chunk_document(doc(*blocks), "d" * 64, words, ChunkerOptions(budget))
    assert chunks
    assert all(len(c.text.split()) <= budget for c in chunks)
    assert [c.chunk_index for c in chunks] == list(range(len(chunks)))
    assert all(c.page_start <= c.page_end for c in chunks)


def test_context_line_opens_every_chunk_and_counts_against_the_budget() -> None:
    blocks = [Block("Flow Control", 1, "heading", ("Streams", "Flow Control"))] + [
        Block(" ".join(sentence(i) for i in range(30)), 1, "paragraph", ("Streams", "Flow Control"))]
    d = doc(*blocks)
    chunks = chunk_document(d, "d" * 64, words, ChunkerOptions(60, 0, "document"))
    assert len(chunks) > 1
    for c in chunks:
        first_line, _, body = c.text.partition("\n")
        assert first_line == "a.pdf > Streams > Flow Control"
        assert len(c.text.split()) <= 60 and c.token_count <= 60
        assert not body.startswith("Flow Control")  # the heading is not repeated
    plain = chunk_document(d, "d" * 64, words, ChunkerOptions(60, 0, "headings"))
    assert plain[0].text.startswith("Streams > Flow Control\n")
    assert plain[0].chunk_id != chunks[0].chunk_id


def test_windows_cover_the_chunk_within_their_budget_and_carry_the_context() -> None:
    heading = ("Streams", "Flow Control")
    blocks = [Block("Flow Control", 1, "heading", heading)] + [
        Block(" ".join(sentence(10 * p + i) for i in range(4)), 1, "paragraph", heading) for p in range(6)]
    options = ChunkerOptions(100, 0, "document", window_tokens=30)
    chunks = chunk_document(doc(*blocks), "d" * 64, words, options)
    assert "-w30" in options.version and options.version != ChunkerOptions(100, 0, "document").version
    for c in chunks:
        assert len(c.windows) > 1
        for w in c.windows:
            assert w.startswith("a.pdf > Streams > Flow Control\n")
            assert len(w.split()) <= 30
        body = c.text.partition("\n")[2]
        joined = " ".join(w.partition("\n")[2] for w in c.windows)
        assert " ".join(body.split()) == " ".join(joined.split())  # every sentence, once, in order
        # paragraph-aligned: after the first, every window opens a 20-token paragraph
        for w in c.windows[1:]:
            assert w.partition("\n")[2].split("\n")[0].startswith(("W0 ", "W10 ", "W20 ", "W30 ", "W40 ", "W50 "))


def test_a_chunk_that_fits_one_window_is_its_own_window_and_windows_default_off() -> None:
    d = doc(Block("One short paragraph here. And a second sentence.", 1))
    on = chunk_document(d, "d" * 64, words, ChunkerOptions(100, window_tokens=50))
    assert on[0].windows == (on[0].text,)
    off = chunk_document(d, "d" * 64, words, ChunkerOptions(100))
    assert off[0].windows == () and off[0].text == on[0].text


def test_align_blocks_starts_a_paragraph_that_fits_in_a_fresh_chunk() -> None:
    blocks = [Block(" ".join(sentence(10 * p + i) for i in range(3)), 1) for p in range(3)]  # 15 tokens each
    loose = chunk_document(doc(*blocks), "d" * 64, words, ChunkerOptions(20, 0))
    aligned = chunk_document(doc(*blocks), "d" * 64, words, ChunkerOptions(20, 0, align_blocks=True))
    assert not loose[1].text.startswith("W10 ")  # greedy packing splits the second paragraph
    assert [c.text.split()[0] for c in aligned] == ["W0", "W10", "W20"]


def test_pack_code_keeps_a_listing_with_the_prose_around_it_and_whole() -> None:
    blocks = [Block("Users are often surprised by results like this:", 1),
              Block(">>> 1.2 - 1.0\n0.19999999999999996", 1, "code"),
              Block("and think it is a bug.", 1),
              Block("| a | b |", 1, "table")]
    separate = chunk_document(doc(*blocks), "d" * 64, words, ChunkerOptions(100))
    packed = chunk_document(doc(*blocks), "d" * 64, words, ChunkerOptions(100, pack_code=True))
    assert [c.block_type for c in separate] == ["paragraph", "code", "paragraph", "table"]
    assert [c.block_type for c in packed] == ["paragraph", "table"]  # tables still stand alone
    assert packed[0].text == ("Users are often surprised by results like this:\n"
                              ">>> 1.2 - 1.0\n0.19999999999999996\nand think it is a bug.")
    assert ChunkerOptions(100, pack_code=True).version != ChunkerOptions(100).version
    # a listing that does not fit what is left starts the next chunk, whole
    long_code = "\n".join(f"x{i} = {i}" for i in range(8))  # 24 tokens
    tight = chunk_document(doc(Block(sentence(0, 10), 1), Block(long_code, 1, "code")), "d" * 64, words,
                           ChunkerOptions(30, 0, pack_code=True))
    assert [c.text for c in tight] == [sentence(0, 10), long_code]


def test_window_at_blocks_opens_a_window_at_every_paragraph() -> None:
    heading = ("FAQ",)
    blocks = [Block("FAQ", 1, "heading", heading)] + [
        Block(" ".join(sentence(10 * p + i, 4) for i in range(2)), 1, "paragraph", heading) for p in range(5)]
    base = ChunkerOptions(100, 0, "document", window_tokens=20)
    packed = chunk_document(doc(*blocks), "d" * 64, words, base)[0].windows
    every = chunk_document(doc(*blocks), "d" * 64, words,
                           ChunkerOptions(100, 0, "document", window_tokens=20, window_at_blocks=True))[0].windows
    starts = [w.partition("\n")[2].split()[0] for w in every]
    assert starts == ["W0", "W10", "W20", "W30", "W40"]  # one per paragraph, in order
    assert set(packed) <= set(every)  # the packed windows are all still there
    assert all(len(w.split()) <= 20 for w in every)
