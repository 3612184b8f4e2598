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

import hashlib
import os
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
#: The packages the anchors were written against, pinned by file and sha256: a later upload may move a passage.
DEBREF_EN_SHA256 = "9f31d3a17df505de09689ca255512ea58c1fc47c59bb1b0c7bf1c23362e9743f"
PYTHON_DOC_VERSION = "3.11.2-6+deb12u9"
PYTHON_DOC_DEB = f"python3.11-doc_{PYTHON_DOC_VERSION}_all.deb"
PYTHON_DOC_SHA256 = "5b3594189d6ef9a6963ce0347fd307a1cc67620ad697e144db366070e2e146be"
_BLOCK_START = re.compile(r"^\s*(?:[-*+] |\d+[.)] |#{1,6} |\|)")


def default_python_doc_dir() -> Path:
    """Where `apt-get download python3.11-doc` put the package: `DOCENT_PYTHON_DOC_DIR`, else the cache."""
    return Path(os.environ.get("DOCENT_PYTHON_DOC_DIR") or Path.home() / ".cache" / "docent" / "python3-doc")


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
        name = f"debian-reference-en_{DEBREF_VERSION}_all.deb"
        return _pinned(self.debref_dir, name, DEBREF_EN_SHA256, "run `make setup-debref` and pass --debref-dir")

    def _python_doc_deb(self) -> Path:
        return _pinned(self.python_doc_dir, PYTHON_DOC_DEB, PYTHON_DOC_SHA256,
                       f"run `apt-get download python3.11-doc={PYTHON_DOC_VERSION}` there and pass --python-doc-dir")


def _pinned(folder: Path | None, name: str, sha256: str, how: str) -> Path:
    """The pinned package in `folder`, checked against its sha256; `MissingSourceError` saying how to get it."""
    deb = folder / name if folder else None
    if deb is None or not deb.is_file():
        raise MissingSourceError(f"{name} is not in {folder}: {how}")
    digest = hashlib.sha256(deb.read_bytes()).hexdigest()
    if digest != sha256:
        raise MissingSourceError(f"{deb}: sha256 {digest} is not the pinned {sha256}; {how}")
    return deb
