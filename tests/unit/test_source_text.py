"""SourceText: inline pieces and Docling-joined runs get the spacing the source has."""

from __future__ import annotations

from rag_system.ingestion.source_text import SourceText, clean_html_text


def test_join_uses_the_gaps_of_the_source() -> None:
    source = SourceText("Utilisez la commande \u00ab\u00a0apt-get\u00a0\u00bb pour ; Il faut taper ls\u00a0: voil\u00e0 ; grascoll\u00e9.")
    assert source.join(["Utilisez la commande \u00ab", "apt-get", "\u00bb pour"]) == \
        "Utilisez la commande \u00ab apt-get \u00bb pour"
    assert source.join(["Il faut taper", "ls", ": voil\u00e0 ;", "gras", "coll\u00e9."]) == \
        "Il faut taper ls : voil\u00e0 ; grascoll\u00e9."


def test_markdown_markup_marks_the_spaces() -> None:
    source = SourceText("See the `cfg` file, or `cfg`. Done.")
    assert source.join(["See the", "cfg", "file, or", "cfg", ". Done."]) == "See the cfg file, or cfg. Done."


def test_respace_undoes_spaces_docling_added_and_keeps_what_it_cannot_find() -> None:
    source = SourceText("x ip(8) and iptables(8) y")
    assert source.respace("ip (8) and iptables (8)") == "ip(8) and iptables(8)"
    assert source.respace("not in the source") == "not in the source"


def test_the_tightest_occurrence_wins() -> None:
    source = SourceText("zip it (8) later; ip(8) here")
    assert source.join(["ip", "(8) here"]) == "ip(8) here"


def test_pieces_not_found_give_none_and_do_not_move_the_search() -> None:
    source = SourceText("alpha beta gamma")
    assert source.join(["delta", "beta"]) is None
    assert source.join(["alpha", "beta"]) == "alpha beta"


def test_clean_keeps_typography_and_drops_invisibles() -> None:
    assert clean_html_text("l\u2019\u00e9t\u00e9 \u201cx\u201d \u2013 \u2026\u200b\u00ad") == "l\u2019\u00e9t\u00e9 \u201cx\u201d \u2013 \u2026"
    assert clean_html_text("a\u00a0b\u202fc") == "a b c"
