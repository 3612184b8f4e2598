"""Decide what a build must do: which files are new, changed, unchanged or gone.

Planning is pure bookkeeping over file hashes and the manifest, so it is cheap
to run before anything is converted, and it is what makes a re-run after a
crash finish the job instead of starting over.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rag_system.indexing.manifest import FileRecord
from rag_system.indexing.objects import is_object_uri
from rag_system.indexing.objects import is_under as objects_is_under


@dataclass(frozen=True)
class SourceFile:
    """One input file: a local file (`path`, absolute and resolved) or an object (`uri`, and `path` is
    only its name: rag_system/indexing/objects.py fetches its bytes)."""

    path: Path
    document_id: str  # sha256 of the bytes
    size: int
    uri: str = ""

    @property
    def key(self) -> str:
        """Its name in the manifest, in events and in a summary: the object's URI or the file's path."""
        return self.uri or str(self.path)


@dataclass
class BuildPlan:
    added: list[SourceFile] = field(default_factory=list)
    updated: list[tuple[SourceFile, FileRecord]] = field(default_factory=list)
    unchanged: list[SourceFile] = field(default_factory=list)
    removed: list[FileRecord] = field(default_factory=list)
    duplicates: list[tuple[SourceFile, str]] = field(default_factory=list)  # (file, path it duplicates)
    skipped: list[str] = field(default_factory=list)  # unsupported types found in folders and prefixes

    @property
    def to_process(self) -> list[tuple[SourceFile, FileRecord | None]]:
        work: list[tuple[SourceFile, FileRecord | None]] = [(f, None) for f in self.added]
        work.extend(self.updated)
        return sorted(work, key=lambda item: item[0].key)


def discover(inputs: Sequence[Path], extensions: Iterable[str]) -> tuple[list[Path], list[Path], list[Path]]:
    """Expand files and folders into (files, skipped, folder roots).

    Hidden files and folders are ignored and symlinked folders are not
    followed, so a build never wanders outside what the user pointed at.
    Files named explicitly are always returned, whatever their extension,
    so that an unsupported file the user asked for is reported, not ignored.
    """
    allowed = {e.lower() for e in extensions}
    files: list[Path] = []
    skipped: list[Path] = []
    roots: list[Path] = []
    for raw in inputs:
        path = Path(raw).expanduser().resolve()
        if path.is_dir():
            roots.append(path)
            for dirpath, dirnames, filenames in os.walk(path, followlinks=False):
                dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
                for name in sorted(filenames):
                    if name.startswith("."):
                        continue
                    candidate = Path(dirpath) / name
                    if not candidate.is_file():
                        continue
                    (files if candidate.suffix.lower() in allowed else skipped).append(candidate)
        elif path.exists():
            files.append(path)
        else:
            raise FileNotFoundError(f"no such file or folder: {raw}")
    unique = sorted(dict.fromkeys(files), key=str)
    return unique, sorted(skipped, key=str), roots


def make_plan(sources: Sequence[SourceFile], skipped: Sequence[str], roots: Sequence[str],
              records: dict[str, FileRecord], chunker_version: str, embedding_model: str,
              held: Iterable[str] = ()) -> BuildPlan:
    """`roots`: folders' paths and prefixes' URIs, under which a file no longer found is removed.
    `held` files (still being written, see rag_system/indexing/sync.py) are left as they are indexed."""
    plan = BuildPlan(skipped=list(skipped))
    owner_of: dict[str, str] = {r.document_id: p for p, r in records.items()}
    seen: set[str] = set(held)
    for source in sources:
        key, digest = source.key, source.document_id
        seen.add(key)
        record = records.get(key)
        owner = owner_of.get(digest)
        if owner is not None and owner != key:
            plan.duplicates.append((source, owner))
            continue
        owner_of[digest] = key
        if record is None:
            plan.added.append(source)
        elif (record.document_id == digest and record.chunker_version == chunker_version
              and record.embedding_model == embedding_model):
            plan.unchanged.append(source)
        else:
            plan.updated.append((source, record))
    for key, record in sorted(records.items()):
        # Only folders the user named can lose files; indexing one more file
        # into an index never removes the others.
        if key not in seen and any(_is_under(key, root) for root in roots):
            plan.removed.append(record)
    return plan


def _is_under(key: str, root: str) -> bool:
    if is_object_uri(root):
        return is_object_uri(key) and objects_is_under(key, root)
    if is_object_uri(key):
        return False
    try:
        Path(key).relative_to(root)
    except ValueError:
        return False
    return True
