"""HTML keeps its own characters: quotes, apostrophes, dashes, ellipses and the spaces in « … ».

Real pages in six languages from Debian's `debian-reference-*` packages
(`make setup-debref` downloads them; testkit/debs.py reads the HTML out of the
.deb). Every paragraph, heading and list line must occur verbatim (up to
whitespace) in the page's visible text, which is what lets a quote or a
highlight match the page byte for byte.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from rag_system.ingestion import convert
from rag_system.ingestion.source_text import SourceText
from testkit.debs import debref_deb, deb_files

TYPOGRAPHY = "\u2019\u201c\u201d\u2013\u2014\u2026\u00ab\u00bb"
_MARKER = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s")


def _page(language: str, name: str, folder: Path) -> Path:
    files = deb_files(debref_deb(language), "usr/share/debian-reference/")
    path = folder / f"{name}.{language}.html"
    path.write_bytes(files[f"usr/share/debian-reference/{name}.{language}.html"])
    return path


def _flat(text: str) -> str:
    return " ".join(text.split())


# The pages are XHTML read the way a browser reads them (as HTML): the alt texts the check needs
# are found alike, and bs4's advice to use an XML parser does not apply.
@pytest.mark.filterwarnings("ignore::bs4.XMLParsedAsHTMLWarning")
@pytest.mark.parametrize("language", ["en", "fr", "de", "es", "ja", "zh-cn"])
def test_debian_reference_page_keeps_its_characters(language: str, tmp_path: Path, settings) -> None:  # type: ignore[no-untyped-def]
    path = _page(language, "ch05", tmp_path)
    document = convert(path, settings)
    visible = SourceText.of_html(path)
    assert visible is not None
    source = visible.text
    soup = BeautifulSoup(path.read_bytes(), "lxml")
    alt_texts = {_flat(img.get("alt", "")) for img in soup.find_all("img")}  # icons' alt text ("[Note]")
    texts = [b.text for b in document.blocks if b.block_type in ("paragraph", "heading")]
    texts += [_MARKER.sub("", line) for b in document.blocks if b.block_type == "list" for line in b.text.split("\n")]
    assert len(texts) > 100
    missing = [t for t in texts if _flat(t) not in source and _flat(t) not in alt_texts]
    assert missing == []
    for char in TYPOGRAPHY:  # none rewritten to ASCII, none lost
        assert sum(b.text.count(char) for b in document.blocks) == source.count(char), char


def test_french_quotes_keep_their_spaces(tmp_path: Path, settings) -> None:  # type: ignore[no-untyped-def]
    path = _page("fr", "ch05", tmp_path)
    document = convert(path, settings)
    text = "\n".join(b.text for b in document.blocks)
    assert text.count("\u00ab ") >= 30  # « commande » as written, not «commande»
    assert "\u00ab" + "ifup" not in text and "\u00abip" not in text


def test_inline_pieces_take_the_source_spacing(tmp_path: Path, settings) -> None:  # type: ignore[no-untyped-def]
    page = tmp_path / "mix.html"
    page.write_text("<html><body><h1>Titre \u2013 \u201cessai\u201d</h1>"
                    "<p>Utilisez la commande \u00ab\u00a0<code>apt-get</code>\u00a0\u00bb pour l\u2019installation\u2026 "
                    "C\u2019est \u201csimple\u201d \u2014 vraiment.</p>"
                    "<p>Il faut taper <code>ls</code>&nbsp;: voil\u00e0 ; <b>gras</b>coll\u00e9.</p>"
                    "<p><span>ip</span>(8) et <code>cfg</code>.</p></body></html>", encoding="utf-8")
    blocks = [b.text for b in convert(page, settings).blocks]
    assert blocks == ["Titre \u2013 \u201cessai\u201d",
                      "Utilisez la commande \u00ab apt-get \u00bb pour l\u2019installation\u2026 "
                      "C\u2019est \u201csimple\u201d \u2014 vraiment.",
                      "Il faut taper ls : voil\u00e0 ; grascoll\u00e9.",
                      "ip(8) et cfg."]
