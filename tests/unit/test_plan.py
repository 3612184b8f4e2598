"""Build planning: what is added, updated, unchanged, removed or a duplicate."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from rag_system.indexing.manifest import FileRecord
from rag_system.indexing.plan import SourceFile, discover, make_plan


def record(path: Path, digest: str, version: str = "v1", model: str = "m") -> FileRecord:
    return FileRecord(path=str(path), document_id=digest, document_name=path.name, file_type="txt",
                      size=1, pages=1, chunks=1, chunker_version=version, embedding_model=model,
                      ocr_engine="", indexed_at="2026-01-01T00:00:00+00:00")


def sources(paths: list[Path], digests: list[str]) -> list[SourceFile]:
    return [SourceFile(p, d, 1) for p, d in zip(paths, digests, strict=True)]


def test_discover_skips_hidden_and_unsupported_and_keeps_explicit(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a")
    (tmp_path / "b.bin").write_bytes(b"\0")
    (tmp_path / ".hidden.txt").write_text("h")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "c.txt").write_text("c")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "d.md").write_text("d")
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("s")
    (tmp_path / "link").symlink_to(outside, target_is_directory=True)
    files, skipped, roots = discover([tmp_path], [".txt", ".md"])
    assert [f.name for f in files] == ["a.txt", "d.md"]
    assert [s.name for s in skipped] == ["b.bin"]
    assert roots == [tmp_path.resolve()]
    explicit, _, roots2 = discover([tmp_path / "b.bin"], [".txt"])
    assert explicit == [(tmp_path / "b.bin").resolve()] and roots2 == []
    with pytest.raises(FileNotFoundError):
        discover([tmp_path / "missing"], [".txt"])


def test_plan_classifies_every_file(tmp_path: Path) -> None:
    a, b, c, d, gone = (tmp_path / n for n in ("a.txt", "b.txt", "c.txt", "d.txt", "gone.txt"))
    records = {str(a): record(a, "A"), str(b): record(b, "B-old"), str(gone): record(gone, "G"),
               str(c): record(c, "C", version="v0")}
    plan = make_plan(sources([a, b, c, d], ["A", "B", "C", "A"]), [], [str(tmp_path)], records, "v1", "m")
    assert [s.path for s in plan.unchanged] == [a]
    assert sorted(s.path.name for s, _ in plan.updated) == ["b.txt", "c.txt"]  # new bytes, new chunker
    assert plan.added == []
    assert [(s.path, owner) for s, owner in plan.duplicates] == [(d, str(a))]
    assert [r.path for r in plan.removed] == [str(gone)]


def test_embedder_change_reprocesses(tmp_path: Path) -> None:
    a = tmp_path / "a.txt"
    plan = make_plan(sources([a], ["A"]), [], [str(tmp_path)], {str(a): record(a, "A", model="old")}, "v1", "new")
    assert [s.path for s, _ in plan.updated] == [a]


def test_files_outside_named_folders_are_never_removed(tmp_path: Path) -> None:
    other = tmp_path / "elsewhere" / "x.txt"
    a = tmp_path / "docs" / "a.txt"
    plan = make_plan(sources([a], ["A"]), [], [str(tmp_path / "docs")], {str(other): record(other, "X")}, "v1", "m")
    assert plan.removed == [] and [s.path for s in plan.added] == [a]


def test_objects_are_planned_by_uri_and_removed_only_under_a_named_prefix(tmp_path: Path) -> None:
    """An object's key is its URI: a prefix removes what is gone under it, never a local file or
    another prefix's object (`s3://b/docs` is not a prefix of `s3://b/docs-old/...`)."""
    kept, new = "s3://b/docs/kept.txt", "s3://b/docs/new.txt"
    gone, sibling, local = "s3://b/docs/gone.txt", "s3://b/docs-old/x.txt", tmp_path / "a.txt"
    records = {k: replace(record(Path(k), d), path=k) for k, d in ((kept, "K"), (gone, "G"), (sibling, "S"))}
    records[str(local)] = record(local, "L")
    found = [SourceFile(Path("kept.txt"), "K", 1, kept), SourceFile(Path("new.txt"), "N", 1, new)]
    plan = make_plan(found, [], ["s3://b/docs"], records, "v1", "m")
    assert [s.key for s in plan.unchanged] == [kept] and [s.key for s in plan.added] == [new]
    assert [r.path for r in plan.removed] == [gone]
    assert [s.key for s, _ in plan.to_process] == [new]
