"""Legacy Word 97-2003 documents (.doc) through Debian's `antiword`, offline and without an office suite.

No Python library reads the text of this binary format (piece tables,
fast saves, code pages), but `antiword`, a small long-kept program, does:
with `-w 0` it prints each paragraph on one line, a form feed at each hard
page break, and tables as `|cell |cell |` lines. `make setup` and the RAG
API image install it. Where it is missing, each .doc fails on its own with
a reason that names the program and the format to save the file as; the
rest of the build goes on.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from rag_system.config import Settings
from rag_system.ingestion.text import line_document
from rag_system.ingestion.types import ConversionError, ConvertedDocument

PROGRAM = "antiword"
PACKAGE = "antiword"  # the Debian package that ships it
#: Seconds one conversion may take; antiword reads a typical file in well under one.
TIMEOUT_S = 120


def convert_doc(path: Path, settings: Settings) -> ConvertedDocument:
    """Paragraphs in order, pages at hard page breaks, antiword's table lines as tables."""
    return line_document(_run(path), path, settings, "doc", _cells)


def _cells(line: str) -> list[str] | None:
    """antiword prints a table row as `|cell   |cell   |`: its cells, or None for a paragraph."""
    stripped = line.strip()
    if len(stripped) > 1 and stripped.startswith("|") and stripped.endswith("|"):
        return [cell.strip() for cell in stripped[1:-1].split("|")]
    return None


def _run(path: Path) -> str:
    executable = shutil.which(PROGRAM)
    if executable is None:
        raise ConversionError(path, f"cannot read legacy .doc files on this server: the {PROGRAM} program is not "
                                    f"installed (Debian package '{PACKAGE}'; 'make setup' installs it). Open the "
                                    "file in a word processor and save it as .docx, or ask the administrator to "
                                    f"install {PROGRAM}")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/tmp"),
           "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
    try:
        done = subprocess.run([executable, "-m", "UTF-8.txt", "-w", "0", str(path)], capture_output=True,
                              timeout=TIMEOUT_S, env=env, check=False, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as exc:
        raise ConversionError(path, f"{PROGRAM} took over {TIMEOUT_S} s on this DOC; "
                                    "open it and save it as .docx") from exc
    except OSError as exc:
        raise ConversionError(path, f"cannot run {PROGRAM}: {exc.strerror or exc}") from exc
    if done.returncode != 0:
        said = done.stderr.strip() or done.stdout.strip()
        detail = " ".join(said.decode("utf-8", "replace").split())[:300].replace(str(path), path.name)
        raise ConversionError(path, f"damaged or unreadable DOC ({PROGRAM}: {detail or 'exit status '}"
                                    f"{'' if detail else done.returncode}); open it and save it as .docx")
    return done.stdout.decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")
