"""Format-neutral helpers: heading paths, whitespace rules, tables, boilerplate, OCR layout."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from rag_system.ingestion.ocr import OcrLine, group_lines
from rag_system.ingestion.pdf_layout import FontProfile, Line, font_profile, heading_level
from rag_system.ingestion.structure import (
    BlockBuilder,
    HeadingTracker,
    boilerplate_key,
    clean_text,
    join_inline,
    join_lines,
    render_table,
    repeated_edge_lines,
)


def _squash(text: str) -> str:
    return "".join(text.split())


def test_heading_tracker_nests_and_closes_sections() -> None:
    tracker = HeadingTracker()
    assert tracker.enter(0, "Manual") == ("Manual",)
    assert tracker.enter(1, "Install") == ("Manual", "Install")
    assert tracker.enter(2, "Linux") == ("Manual", "Install", "Linux")
    assert tracker.enter(2, "macOS") == ("Manual", "Install", "macOS")
    assert tracker.enter(1, "Usage") == ("Manual", "Usage")
    assert tracker.enter(0, "Appendix") == ("Appendix",)
    tracker.reset()
    assert tracker.path == ()


def test_heading_tracker_skipped_levels() -> None:
    tracker = HeadingTracker()
    tracker.enter(3, "Deep first")
    assert tracker.enter(1, "Top") == ("Top",)


def test_block_builder_heading_path_includes_heading_itself() -> None:
    builder = BlockBuilder()
    builder.heading("  Safety \n notes ", 2, 1)
    builder.add("Wear gloves.", 2)
    builder.add("   \n", 2)  # whitespace-only text is dropped
    heading, para = builder.blocks
    assert heading.block_type == "heading" and heading.text == "Safety notes"
    assert heading.heading_path == ("Safety notes",) == para.heading_path
    assert para.page == 2 and para.block_type == "paragraph"


def test_join_inline_spacing() -> None:
    assert join_inline(["see the", "cfg", "file", "."]) == "see the cfg file."
    assert join_inline(["call (", "x", ")"]) == "call (x)"
    assert join_inline(["Docent", "'s", "index"]) == "Docent's index"
    assert join_inline(["", "  a ", "b"]) == "a b"


def test_join_lines_keeps_hyphenated_words() -> None:
    assert join_lines(["flow-", "controlled streams"]) == "flow-controlled streams"
    assert join_lines(["The end -", "Next"]) == "The end - Next"
    assert join_lines(["one", "", "two"]) == "one two"


@given(st.lists(st.text(max_size=40), max_size=8))
def test_join_lines_only_changes_whitespace(lines: list[str]) -> None:
    assert _squash(join_lines(lines)) == _squash("".join(lines))


@given(st.text(max_size=200))
def test_clean_text_only_drops_controls_and_spaces(text: str) -> None:
    cleaned = clean_text(text)
    assert "\x00" not in cleaned and "\r" not in cleaned
    dropped = {chr(c) for c in [*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0), 0xAD, 0xFEFF]}
    kept = [ch for ch in text if ch not in dropped and not ch.isspace()]
    assert _squash(cleaned) == "".join(kept)


def test_render_table() -> None:
    table = render_table([["Part", "Cost | EUR"], ["gasket\n(MG-311)", None], ["", ""]])
    assert table == "| Part | Cost \\| EUR |\n|---|---|\n| gasket (MG-311) |  |"
    assert render_table([]) == ""


def test_boilerplate_detection_needs_most_pages() -> None:
    pages = [["ACME Manual  page 1", "Intro"], ["ACME Manual  page 2"], ["ACME manual page 3", "Tail"], ["Other"]]
    keys = repeated_edge_lines(pages)
    assert keys == {boilerplate_key("ACME Manual page 9")}
    assert repeated_edge_lines(pages[:2]) == set()  # too short to judge


def _line(text: str, size: float, bold: bool = False, first: bool = True, block: int = 0) -> Line:
    return Line(text=text, size=size, bold=bold, mono=False, bbox=(0, 0, 100, 10), block_no=block,
                first_in_block=first)


def test_font_profile_and_heading_levels() -> None:
    body = [_line("Body text " * 30, 10.0)] * 5
    pages = [[_line("Big Title", 20.0), _line("Section A", 14.0), *body]]
    profile = font_profile(pages)
    assert profile.body_size == 10.0
    assert profile.levels == {20.0: 1, 14.0: 2}
    assert heading_level(_line("Big Title", 20.0), profile, False) == 1
    assert heading_level(_line("Section A", 14.0), profile, False) == 2
    assert heading_level(_line("Warranty Terms", 10.0, bold=True), profile, False) == 3
    assert heading_level(_line("1. OPERATING SPECIFICATIONS", 10.0), profile, False) == 3


def test_body_size_lines_that_are_not_headings() -> None:
    profile = FontProfile(body_size=10.0, levels={})
    assert heading_level(_line("Note: bold label ends with colon:", 10.0, bold=True), profile, False) is None
    assert heading_level(_line("Letter", 10.0, bold=True, first=False), profile, False) is None
    assert heading_level(_line("USD", 10.0), profile, False) is None  # too few capitals
    assert heading_level(_line("plain body line", 10.0), profile, False) is None
    assert heading_level(_line("\u2022 BULLET ITEM", 10.0), profile, False) is None
    long_bold = _line("word " * 40, 10.0, bold=True)
    assert heading_level(long_bold, profile, False) is None


def test_group_lines_rows_and_paragraphs() -> None:
    lines = [
        OcrLine("world", 120, 10, 200, 30), OcrLine("Hello", 10, 12, 100, 30),  # one row, out of order
        OcrLine("second line", 10, 34, 200, 52),
        OcrLine("New paragraph", 10, 90, 200, 110),
    ]
    assert group_lines(lines) == ["Hello world second line", "New paragraph"]
    assert group_lines([]) == []


def _at(text: str, size: float, block: int, y: float, first: bool, mono: bool = False) -> Line:
    return Line(text=text, size=size, bold=False, mono=mono, bbox=(72, y, 300, y + 10), block_no=block,
                first_in_block=first)


def test_build_page_blocks_kinds_and_tables() -> None:
    from rag_system.ingestion.pdf_layout import build_page_blocks

    profile = FontProfile(body_size=10.0, levels={16.0: 1})
    lines = [
        _at("Setup Guide", 16.0, 0, 10, True),
        _at("Install the package from the internal mirror and", 10.0, 1, 30, True),
        _at("restart the flow-", 10.0, 1, 42, False),
        _at("controlled service.", 10.0, 1, 54, False),
        _at("\u2022 first bullet", 10.0, 2, 70, True),
        _at("continues here", 10.0, 2, 82, False),
        _at("\u2022 second bullet", 10.0, 3, 94, True),  # separate PDF block, same list
        _at("pip install docent", 10.0, 4, 110, True, mono=True),
        _at("cell a", 10.0, 5, 205, True),
        _at("cell b", 10.0, 5, 225, False),
        _at("After the table.", 10.0, 6, 300, True),
    ]
    builder = BlockBuilder()
    build_page_blocks(lines, 4, profile, builder, tables=[((60, 200, 400, 240), "| cell a |\n|---|\n| cell b |")])
    got = [(b.block_type, b.text) for b in builder.blocks]
    assert got == [
        ("heading", "Setup Guide"),
        ("paragraph", "Install the package from the internal mirror and restart the flow-controlled service."),
        ("list", "\u2022 first bullet continues here\n\u2022 second bullet"),
        ("code", "pip install docent"),
        ("table", "| cell a |\n|---|\n| cell b |"),
        ("paragraph", "After the table."),
    ]
    assert all(b.page == 4 and b.heading_path == ("Setup Guide",) for b in builder.blocks)


def test_long_large_font_run_is_a_paragraph() -> None:
    from rag_system.ingestion.pdf_layout import build_page_blocks

    profile = FontProfile(body_size=10.0, levels={14.0: 1})
    lines = [_at("A lead paragraph set in a larger font spans many short lines", 14.0, 0, 10 + 16 * i, i == 0)
             for i in range(5)]
    builder = BlockBuilder()
    build_page_blocks(lines, 1, profile, builder)
    assert [b.block_type for b in builder.blocks] == ["paragraph"]
