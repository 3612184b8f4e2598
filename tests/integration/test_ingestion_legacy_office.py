"""Legacy .doc (antiword) and .ppt (olefile records): real files LibreOffice wrote, and their failures."""

from __future__ import annotations

from pathlib import Path

import pytest

from rag_system.config import Settings
from rag_system.ingestion import ConversionError, convert
from testkit import formats as fx

SETTINGS = Settings()


@pytest.fixture(scope="module")
def legacy(tmp_path_factory) -> tuple[Path, Path]:  # type: ignore[no-untyped-def]
    return fx.make_legacy_office(tmp_path_factory.mktemp("legacy"))


def _texts(doc) -> list[str]:  # type: ignore[no-untyped-def]
    return [b.text for b in doc.blocks]


def test_doc_paragraphs_and_table(legacy) -> None:  # type: ignore[no-untyped-def]
    doc = convert(legacy[0], SETTINGS)
    assert doc.file_type == "doc" and doc.warnings == ()
    texts = _texts(doc)
    assert fx.ODT_PAGE_TWO in texts and "This manual covers the  SX-200 spectrometer." in texts
    assert "| Setting | Value |\n|---|---|\n| Warm-up | 40 min |" in texts
    assert [b.block_type for b in doc.blocks if "Warm-up" in b.text] == ["table"]


def test_ppt_slides_are_pages_with_titles(legacy) -> None:  # type: ignore[no-untyped-def]
    doc = convert(legacy[1], SETTINGS)
    assert doc.file_type == "ppt" and doc.page_count == 2
    for number, (title, body) in enumerate(fx.ODP_SLIDES, start=1):
        (block,) = [b for b in doc.blocks if b.text == body]
        assert block.page == number and block.heading_path == (title,)
    assert not any("Click to edit" in text for text in _texts(doc))  # master placeholders are not slides


def test_doc_without_antiword_fails_alone_naming_the_format_to_save_as(legacy, monkeypatch,  # type: ignore[no-untyped-def]
                                                                      tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # a server where antiword was never installed
    with pytest.raises(ConversionError) as info:
        convert(legacy[0], SETTINGS)
    assert "antiword program is not installed" in info.value.reason
    assert "save it as .docx" in info.value.reason


@pytest.mark.parametrize("index", [0, 1])
def test_truncated_legacy_file_is_a_clear_failure(legacy, index: int, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    source = legacy[index]
    cut = tmp_path / source.name
    cut.write_bytes(source.read_bytes()[:3000])
    with pytest.raises(ConversionError) as info:
        convert(cut, SETTINGS)
    modern = ".docx" if source.suffix == ".doc" else ".pptx"
    assert info.value.reason.startswith(f"damaged or unreadable {source.suffix[1:].upper()}"), info.value.reason
    assert info.value.reason.endswith(f"open it and save it as {modern}")


def test_ppt_named_doc_says_rename(legacy, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    renamed = tmp_path / "deck.doc"
    renamed.write_bytes(legacy[1].read_bytes())
    with pytest.raises(ConversionError) as info:
        convert(renamed, SETTINGS)
    assert info.value.reason == "not a valid DOC: the content is a PowerPoint 97-2003 presentation; rename it to .ppt"
