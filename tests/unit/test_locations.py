"""Locations of a cited sentence: its own page in a PDF chunk that spans pages, its lines in a text file."""

from __future__ import annotations

from pathlib import Path

from rag_system.chunking.chunker import ChunkerOptions, chunk_document
from rag_system.config import load_settings
from rag_system.ingestion.text import convert_text
from rag_system.ingestion.types import Block, ConvertedDocument
from rag_system.retrieval.locations import chunk_location, quote_location
from rag_system.retrieval.types import Candidate


def words(texts: list[str]) -> list[int]:
    return [len(t.split()) for t in texts]


def candidate(chunk, name: str, text: str | None = None) -> Candidate:  # type: ignore[no-untyped-def]
    from rag_system.chunking.chunk import metadata_json

    return Candidate(chunk.chunk_id, "d" * 64, name, chunk.chunk_index, chunk.page_start, chunk.page_end,
                     chunk.heading_path, chunk.block_type, text if text is not None else chunk.text, metadata_json(chunk))


def test_a_sentence_on_the_second_page_of_a_chunk_is_located_there() -> None:
    doc = ConvertedDocument(Path("/x/guide.pdf"), "guide.pdf", "pdf", 2, (
        Block("The heron nests in reeds. It eats fish.", 1),
        Block("The bluejay is described on this page. It is blue.", 2)))
    [chunk] = chunk_document(doc, "d" * 64, words, ChunkerOptions(max_tokens=200, context="none"))
    assert (chunk.page_start, chunk.page_end) == (1, 2)
    c = candidate(chunk, "guide.pdf")
    assert c.locate("The bluejay is described on this page.")["page"] == 2
    assert c.locate("It eats fish.")["page"] == 1
    assert c.to_json()["location"] == {"paged": True, "section": "", "page": 1}
    # merged with a neighbour before it (context expansion), the anchors still find the sentence
    merged = candidate(chunk, "guide.pdf", "An earlier passage on page one.\n" + chunk.text)
    assert merged.locate("The bluejay is described on this page.")["page"] == 2
    assert merged.locate("An earlier passage on page one.")["page"] == 1


def test_a_text_file_cites_its_section_and_lines(tmp_path: Path) -> None:
    path = tmp_path / "rfc.txt"
    path.write_text("1.  Introduction\n\nThe protocol is new.\nIt is fast.\n\n2.  Streams\n\n"
                    "A stream is an ordered byte sequence.\nStreams are cheap to open.\n")
    doc = convert_text(path, load_settings(environ={}, dotenv_path=None))
    chunks = chunk_document(doc, "d" * 64, words, ChunkerOptions(max_tokens=200))
    streams = next(c for c in chunks if "ordered byte" in c.text)
    loc = candidate(streams, "rfc.txt").locate("Streams are cheap to open.")
    assert loc["paged"] is False and loc["section"] == "2. Streams"
    assert loc["lines"] == [9, 9]  # the file's own line numbers
    assert chunk_location(candidate(streams, "rfc.txt").metadata, streams.heading_path, 1, 1)["lines"] == [6, 9]  # from its heading


def test_chunks_indexed_before_locations_keep_their_pages() -> None:
    old = '{"file_type": "pdf", "pages": [3, 4]}'
    assert quote_location(old, "Terms", 3, 4, "Some text. More text.", "More text.") == \
        {"paged": True, "section": "Terms", "page": 3}
    assert chunk_location('{"file_type": "txt"}', "", 1, 1)["paged"] is False
