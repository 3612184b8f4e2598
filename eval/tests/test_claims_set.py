"""The claims set built from the real documents, and the builder failing loudly on anchors that do not hold."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from eval.claims.build import KINDS, MINIMUM, MINIMUM_ROWS, build, main, read_specs
from eval.claims.documents import PYTHON_DOC_DEB, PYTHON_DOC_VERSION, Library, default_python_doc_dir
from testkit import EVAL_DATA
from testkit.debs import DEBREF_VERSION, debref_dir

DEBREF_DEB = debref_dir() / f"debian-reference-en_{DEBREF_VERSION}_all.deb"
PYTHON_DOC = default_python_doc_dir()
MISSING = [
    (not (EVAL_DATA / "localgpt").is_dir(), f"shared eval data not at {EVAL_DATA} (set DOCENT_EVAL_DATA)"),
    (not DEBREF_DEB.is_file(), f"{DEBREF_DEB} missing: run `make setup-debref`"),
    (not (PYTHON_DOC / PYTHON_DOC_DEB).is_file(), f"{PYTHON_DOC / PYTHON_DOC_DEB} missing: `apt-get download "
     f"python3.11-doc={PYTHON_DOC_VERSION}` there (or set DOCENT_PYTHON_DOC_DIR)"),
]
needs_sources = pytest.mark.skipif(any(m for m, _ in MISSING), reason="; ".join(r for m, r in MISSING if m))
_MARKER = re.compile(r"\[(\d+)\]")


@pytest.fixture(scope="module")
def built() -> tuple[list[dict[str, Any]], list[str], list[dict[str, Any]]]:
    specs = read_specs("all")
    rows, problems = build(specs, Library(EVAL_DATA, debref_dir(), PYTHON_DOC))
    return specs, problems, rows


@needs_sources
def test_every_anchor_resolves_exactly_once(built: tuple[list[dict[str, Any]], list[str], list[dict[str, Any]]]) -> None:
    specs, problems, rows = built
    assert problems == []
    assert len(rows) == len(specs)
    assert all(source["text"] for row in rows for source in row["sources"])


@needs_sources
def test_the_set_has_its_size_kinds_and_splits(built: tuple[list[dict[str, Any]], list[str], list[dict[str, Any]]]) -> None:
    _, _, rows = built
    assert len(rows) >= MINIMUM_ROWS
    kinds = Counter(row["kind"] for row in rows)
    assert all(kinds[kind] >= least for kind, least in MINIMUM.items()), kinds
    ids = Counter(row["id"] for row in rows)
    assert [i for i, n in ids.items() if n > 1] == []
    dev = sum(row["split"] == "dev" for row in rows) / len(rows)
    assert 0.35 <= dev <= 0.45
    families = Counter(row["family"] for row in rows)
    assert set(families) == {"localgpt", "pydocs", "debref", "python-doc"}
    assert 0.4 <= sum(row.get("question") is not None for row in rows) / len(rows) <= 0.6


@needs_sources
def test_rows_are_labelled_explained_and_cite_existing_sources(
        built: tuple[list[dict[str, Any]], list[str], list[dict[str, Any]]]) -> None:
    _, _, rows = built
    for row in rows:
        assert row["label"] in ("supported", "contradicted", "unsupported"), row["id"]
        assert (row["label"] == "supported") == (row["kind"] == "true"), row["id"]
        if row["kind"] == "unsupported":
            assert row["label"] == "unsupported", row["id"]
        if row["kind"] != "true":
            assert row["note"].strip(), row["id"]
        cited = {int(n) for n in _MARKER.findall(row["claim"])}
        assert cited and cited <= {s["n"] for s in row["sources"]}, row["id"]
        assert [s["n"] for s in row["sources"]] == list(range(1, len(row["sources"]) + 1)), row["id"]


@needs_sources
def test_dev_and_test_share_no_passage(built: tuple[list[dict[str, Any]], list[str], list[dict[str, Any]]]) -> None:
    """Tuning on dev must not see a test passage."""
    _, _, rows = built
    passages: dict[str, set[str]] = {"dev": set(), "test": set()}
    for row in rows:
        passages[row["split"]].update(source["text"] for source in row["sources"])
    assert passages["dev"] & passages["test"] == set()


@needs_sources
def test_the_cli_writes_one_split(tmp_path: Path) -> None:
    out = tmp_path / "dev.jsonl"
    assert main(["--data-dir", str(EVAL_DATA), "--split", "dev", "--out", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert rows and {row["split"] for row in rows} == {"dev"}
    assert set(rows[0]) >= {"id", "split", "kind", "label", "claim", "sources", "note"}


def test_the_builder_names_every_anchor_that_does_not_hold(tmp_path: Path) -> None:
    """Built over a small real corpus, so it runs without the shared data."""
    corpus = tmp_path / "localgpt" / "corpora" / "docs"
    corpus.mkdir(parents=True)
    (corpus / "guide.md").write_text(
        "# Ports\n\nThe primary listens on 8443. The backup listens on 9443.\n\n"
        "- The backup is optional.\n- The backup is optional.\n", encoding="utf-8")

    def spec(row_id: str, claim: str, **source: Any) -> dict[str, Any]:
        return {"id": row_id, "kind": "number", "claim": claim, "note": "swapped", "split": "dev", "_line": row_id,
                "sources": [{"family": "localgpt", "doc": "docs/guide.md", **source}]}

    specs = [
        spec("good", "The backup listens on 9443 [1].", anchor="The backup listens", before=1),
        spec("absent", "The backup listens on 7443 [1].", anchor="The standby listens"),
        spec("twice", "The backup is required [1].", anchor="The backup is optional."),
        spec("no-end", "The primary listens on 9443 [1].", start="The primary", end="The standby"),
        spec("marker", "The primary listens on 8443 [2].", anchor="The primary listens"),
        {**spec("unexplained", "The backup listens on 8443 [1].", anchor="The backup listens"), "note": ""},
    ]
    rows, problems = build(specs, Library(tmp_path))
    assert [row["id"] for row in rows] == ["good"]
    assert rows[0]["sources"][0]["text"] == "The primary listens on 8443. The backup listens on 9443."
    assert sorted(p.split(" ", 1)[0] for p in problems) == sorted(
        f"{i}" for i in ("absent", "twice", "no-end", "marker", "unexplained"))
    assert any("occurs 2 times" in p for p in problems) and any("occurs 0 times" in p for p in problems)


def test_kinds_map_to_the_labels_the_issue_names() -> None:
    assert set(KINDS) == set(MINIMUM)
    assert KINDS["true"] == "supported" and KINDS["unsupported"] == "unsupported"
    assert {KINDS[k] for k in ("stitched", "number", "entity", "polarity", "overgeneral")} == {"contradicted"}
