"""A folder of mixed formats, a scanned page and broken files, through the CLI.

The issue's acceptance scenario: the zero-byte file and the corrupt PDF are
reported in `failed` with reasons; everything else is searchable, including
the text that only OCR can read.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from testkit import REPO_ROOT
from testkit import docs as fx


def run_cli(*args: str, data_dir: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DOCENT_DATA_DIR": str(data_dir), "HF_HUB_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-m", "rag_system", *args], cwd=REPO_ROOT, env=env,
                          capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_mixed_folder_index_and_search(tmp_path: Path) -> None:
    folder = tmp_path / "mixed"
    folder.mkdir()
    fx.make_pdf(folder / "guide.pdf")
    fx.make_docx(folder / "policy.docx")
    fx.make_html(folder / "garden.html")
    fx.make_scanned_pdf(folder / "scan.pdf", extra_text_page=True)
    (folder / "empty.txt").write_bytes(b"")
    fx.make_truncated_pdf(folder / "corrupt.pdf")
    data = tmp_path / "data"

    first = run_cli("index", str(folder), "--index", "mixed", "--json", data_dir=data)
    assert first.returncode == 0, first.stderr
    summary = json.loads(first.stdout)
    failed = {Path(f["path"]).name: f["reason"] for f in summary["files"]["failed"]}
    assert set(failed) == {"empty.txt", "corrupt.pdf"}
    assert "empty" in failed["empty.txt"]
    assert "PDF" in failed["corrupt.pdf"]
    assert summary["files"]["added"] == 4
    assert summary["ocr"]["pages"] == 1 and summary["ocr"]["engines"] == ["rapidocr"]

    def top(query: str, **extra: str) -> dict:  # type: ignore[type-arg]
        args = ["retrieve", query, "--index", "mixed", "--json", "--k", "3"]
        for key, value in extra.items():
            args += [f"--{key}", value]
        result = run_cli(*args, data_dir=data)
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)["results"][0]

    assert top("zephyrine inventory")["document_name"] == "scan.pdf"
    assert top("zephyrine inventory")["page_start"] == 1
    assert top("pelican migration season")["page_end"] == 2  # the chunk spans both short pages
    assert top("nightly cap for hotels in Lisbon")["document_name"] == "policy.docx"
    assert top("how often to water the hydrangea")["document_name"] == "garden.html"
    assert top(fx.PDF_PAGE_WORDS[2])["document_name"] == "guide.pdf"
    pdf_only = top("hydrangea", filters=json.dumps({"file_type": "pdf"}))
    assert pdf_only["document_name"] in {"guide.pdf", "scan.pdf"}

    again = run_cli("index", str(folder), "--index", "mixed", "--json", data_dir=data)
    repeat = json.loads(again.stdout)["files"]
    assert (repeat["unchanged"], repeat["added"], len(repeat["failed"])) == (4, 0, 2)


def test_retrieve_cli_rejects_bad_input(tmp_path: Path) -> None:
    bad_filter = run_cli("retrieve", "x", "--index", "nope", "--filters", '{"author": 1}', data_dir=tmp_path)
    assert bad_filter.returncode == 2 and "unknown filter field" in bad_filter.stderr
    bad_json = run_cli("retrieve", "x", "--index", "nope", "--filters", "{", data_dir=tmp_path)
    assert bad_json.returncode == 2
    missing = run_cli("retrieve", "x", "--index", "nope", data_dir=tmp_path)
    assert missing.returncode == 2 and "does not exist" in missing.stderr
    bad_name = run_cli("index", str(tmp_path), "--index", "../evil", data_dir=tmp_path)
    assert bad_name.returncode == 2 and "invalid index name" in bad_name.stderr
