"""Hostile files uploaded through the gateway and built by the RAG API: each is refused or fails alone.

A file is either refused at upload (4xx with a message) or uploaded and then
reported by the build as a per-file failure with a reason; a file that is a
valid document (HTML with scripts) is indexed without its script text. The
build itself must finish and the other files of the same build are indexed.
The limits used here (`HOSTILE_ENV`) are those of a small deployment, so a
5,000-page PDF and a 200 MB decompression bomb hit them in seconds.
"""

from __future__ import annotations

import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from testkit.docs import (
    HTML_SCRIPT_MARKER,
    make_binary_as_text,
    make_encrypted_pdf,
    make_fake_docx,
    make_html,
    make_text,
    make_truncated_pdf,
)
from testkit.stack import Stack, wait_build

#: Environment of the RAG API under test: the page cap and the file-size cap (which scales the bomb limit).
HOSTILE_ENV = {"DOCENT_MAX_PAGES": "1000", "DOCENT_MAX_FILE_BYTES": str(3 * 1024 * 1024)}
BOMB_BYTES = 200 * 1024 * 1024


def make_big_pdf(path: Path, pages: int = 5000) -> Path:
    import pymupdf

    doc = pymupdf.open()
    for n in range(pages):
        doc.new_page(width=200, height=200).insert_text((20, 40), f"page {n + 1}", fontsize=9)
    doc.save(path, garbage=0, deflate=True)
    doc.close()
    return path


def make_zip_bomb(path: Path, expanded: int = BOMB_BYTES) -> Path:
    """A DOCX whose document part inflates from ~200 KB to `expanded` bytes of zeros."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/'
                         'package/2006/content-types"><Override PartName="/word/document.xml" ContentType="application/'
                         'vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>')
        with archive.open("word/document.xml", "w", force_zip64=True) as part:
            block = b"\0" * (1024 * 1024)
            for _ in range(expanded // len(block)):
                part.write(block)
    return path


def _empty(path: Path) -> Path:
    path.write_bytes(b"")
    return path


#: name -> (builder, what must happen: "refused" at upload, "failed" in the build, "indexed").
HOSTILE_FILES: dict[str, tuple[Callable[[Path], Path], str]] = {
    "empty.txt": (_empty, "refused"),
    "script.sh": (make_text, "refused"),
    "truncated.pdf": (make_truncated_pdf, "failed"),
    "encrypted.pdf": (make_encrypted_pdf, "failed"),
    "pages-5000.pdf": (make_big_pdf, "failed"),
    "bomb.docx": (make_zip_bomb, "failed"),
    "binary.txt": (make_binary_as_text, "failed"),
    "not-a-zip.docx": (make_fake_docx, "failed"),
    "scripts.html": (make_html, "indexed"),
    "good.txt": (make_text, "indexed"),
}


@dataclass
class HostileResult:
    outcomes: dict[str, dict[str, Any]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    script_leaked: bool = False

    @property
    def handled(self) -> int:
        return len(self.outcomes) - len({p.split(":")[0] for p in self.problems})


def run_hostile(stack: Stack, work: Path) -> HostileResult:
    """Upload every hostile file to a fresh index, build it, check each file's fate."""
    result = HostileResult()
    gw = stack.gw
    iid = gw.post("/indexes", {"name": "Hostile files"}).json["index_id"]
    stored: dict[str, str] = {}
    for name, (builder, expected) in HOSTILE_FILES.items():
        path = builder(work / name)
        reply = gw.upload(f"/indexes/{iid}/upload", [(name, path.read_bytes())])
        outcome: dict[str, Any] = {"expected": expected, "upload_status": reply.status}
        result.outcomes[name] = outcome
        if reply.status >= 500:
            result.problems.append(f"{name}: upload answered {reply.status}")
        elif 400 <= reply.status < 500:
            outcome["reason"] = reply.json["message"]
            if expected != "refused":
                result.problems.append(f"{name}: refused at upload ({outcome['reason']}), expected {expected}")
        else:
            stored[reply.json["uploaded_files"][0]["stored_path"]] = name
            if expected == "refused":
                result.problems.append(f"{name}: accepted at upload, expected a 4xx")
    job = wait_build(gw, iid, timeout_s=600)
    if job["state"] != "done":
        result.problems.append(f"build: ended {job['state']}: {job.get('error')}")
    files = {f["path"]: f for f in job.get("files") or []}
    for stored_path, name in stored.items():
        outcome = result.outcomes[name]
        entry = next((f for p, f in files.items() if Path(p).name == Path(stored_path).name), None)
        outcome["state"] = entry["state"] if entry else "missing"
        outcome["reason"] = entry.get("error") if entry else None
        got = "failed" if outcome["state"] == "failed" else "indexed" if outcome["state"] == "done" else "other"
        if got != outcome["expected"]:
            result.problems.append(f"{name}: {outcome['state']} ({outcome['reason']}), expected {outcome['expected']}")
        elif got == "failed" and not outcome["reason"]:
            result.problems.append(f"{name}: failed without a reason")
    found = stack.api.post("/retrieve", {"query": HTML_SCRIPT_MARKER, "index": iid, "retrieval_mode": "fts_only"})
    result.script_leaked = found.status != 200 or any(
        HTML_SCRIPT_MARKER in c.get("text", "") for c in found.json.get("chunks", found.json.get("results", [])))
    if result.script_leaked:
        result.problems.append(f"scripts.html: script text reached the index ({found.status})")
    return result
