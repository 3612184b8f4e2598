"""Read the documents the claims cite, each as the blocks a reader of that format sees.

Four source families, each read where it lies and never copied into the
repository:

- `localgpt`: the shared localGPT corpora (`<data-dir>/localgpt/corpora`, MIT);
- `pydocs`: the shared Python 3.11 documentation corpus (`<data-dir>/pydocs/corpus`, PSF licence);
- `debref`: HTML chapters of Debian's `debian-reference-en` package (GPL-2+), read out of the .deb;
- `python-doc`: HTML pages of Debian's `python3.11-doc` package (PSF licence), read out of the .deb.

PDFs and HTML go through the product's own ingestion (`rag_system.ingestion.convert`
with the default settings), so a passage is the text the indexer would see;
Markdown and plain text are read as they are, cut into blocks at blank lines,
list items and headings.
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eval.claims.passages import Document
from testkit.debs import DEBREF_VERSION, deb_files

FAMILIES = ("localgpt", "pydocs", "debref", "python-doc")
DEBREF_ROOT = "usr/share/debian-reference/"
PYTHON_DOC_ROOT = "usr/share/doc/python3.11/html/"
PYTHON_DOC_GLOB = "python3.11-doc_*_all.deb"
_BLOCK_START = re.compile(r"^\s*(?:[-*+] |\d+[.)] |#{1,6} |\|)")


class MissingSourceError(FileNotFoundError):
    """A document or package the claims need is not where the flags say; the message says how to get it."""


def text_blocks(text: str) -> list[str]:
    """Blocks of a Markdown or plain-text file: paragraphs, and each list item, heading or table row apart."""
    blocks: list[str] = []
    current: list[str] = []
    for line in text.replace("\f", "\n").splitlines():
        if not line.strip() or _BLOCK_START.match(line):
            if current:
                blocks.append(" ".join(current))
            current = [line] if line.strip() else []
        else:
            current.append(line)
    if current:
        blocks.append(" ".join(current))
    return blocks


@dataclass
class Library:
    """Where each family's documents are, and the documents read so far (each converted once)."""

    data_dir: Path
    debref_dir: Path | None = None
    python_doc_dir: Path | None = None
    _cache: dict[tuple[str, str], Document] = field(default_factory=dict)
    _debs: dict[str, dict[str, bytes]] = field(default_factory=dict)
    _settings: Any = None

    def document(self, family: str, doc: str) -> Document:
        key = (family, doc)
        if key not in self._cache:
            self._cache[key] = Document.from_blocks(doc, self._blocks(family, doc))
        return self._cache[key]

    def _blocks(self, family: str, doc: str) -> list[str]:
        if family == "localgpt":
            return self._file_blocks(self.data_dir / "localgpt" / "corpora" / doc)
        if family == "pydocs":
            return self._file_blocks(self.data_dir / "pydocs" / "corpus" / doc)
        if family == "debref":
            return self._deb_blocks(self._debref_deb(), DEBREF_ROOT, doc)
        if family == "python-doc":
            return self._deb_blocks(self._python_doc_deb(), PYTHON_DOC_ROOT, doc)
        raise ValueError(f"unknown source family {family!r} (known: {', '.join(FAMILIES)})")

    def _file_blocks(self, path: Path) -> list[str]:
        if not path.is_file():
            raise MissingSourceError(f"{path} is missing (is --data-dir the shared eval-data folder?)")
        if path.suffix.lower() in (".md", ".txt"):
            return text_blocks(path.read_text(encoding="utf-8"))
        return self._converted(path)

    def _converted(self, path: Path) -> list[str]:
        from rag_system.config import load_settings
        from rag_system.ingestion import convert

        if self._settings is None:
            self._settings = load_settings(environ={}, dotenv_path=None)
        return [block.text for block in convert(path, self._settings).blocks]

    def _deb_blocks(self, deb: Path, root: str, doc: str) -> list[str]:
        files = self._debs.setdefault(str(deb), deb_files(deb, root))
        data = files.get(root + doc)
        if data is None:
            raise MissingSourceError(f"{deb.name} holds no {root + doc}")
        with tempfile.TemporaryDirectory(prefix="docent-claims-") as tmp:
            path = Path(tmp) / Path(doc).name
            path.write_bytes(data)
            return self._converted(path)

    def _debref_deb(self) -> Path:
        folder = self.debref_dir
        deb = folder / f"debian-reference-en_{DEBREF_VERSION}_all.deb" if folder else None
        if deb is None or not deb.is_file():
            raise MissingSourceError(f"debian-reference-en_{DEBREF_VERSION}_all.deb not in {folder}: run "
                                     "`make setup-debref` and pass --debref-dir")
        return deb

    def _python_doc_deb(self) -> Path:
        folder = self.python_doc_dir
        debs = sorted(folder.glob(PYTHON_DOC_GLOB)) if folder and folder.is_dir() else []
        if not debs:
            raise MissingSourceError(f"no {PYTHON_DOC_GLOB} in {folder}: run `apt-get download python3.11-doc` "
                                     "in that folder and pass --python-doc-dir")
        return debs[-1]
