"""Progress events of an index build and its final summary.

The same events feed the CLI progress bar, the job record and (later) the
job's SSE stream, so they are plain data with a JSON form.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class BuildEvent:
    type: str
    path: str | None = None
    data: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type, **self.data}
        if self.path is not None:
            out["path"] = self.path
        return out


EventSink = Callable[[BuildEvent], None]


def ignore_event(_: BuildEvent) -> None:
    """Default sink for callers that do not report progress."""


@dataclass
class BuildSummary:
    index: str
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    removed: int = 0
    failed: list[dict[str, str]] = field(default_factory=list)
    duplicates: list[dict[str, str]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    held: list[str] = field(default_factory=list)  # written to while read: left as indexed, for the next run
    chunks: int = 0
    pages: int = 0
    ocr_pages: int = 0
    ocr_engines: list[str] = field(default_factory=list)
    index_chunks: int = 0
    index_documents: int = 0
    seconds: float = 0.0
    timings: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "files": {
                "added": self.added,
                "updated": self.updated,
                "unchanged": self.unchanged,
                "removed": self.removed,
                "failed": list(self.failed),
            },
            "duplicates": list(self.duplicates),
            "skipped": list(self.skipped),
            "held": list(self.held),
            "chunks": self.chunks,
            "pages": self.pages,
            "ocr": {"pages": self.ocr_pages, "engines": list(self.ocr_engines)},
            "index_totals": {"documents": self.index_documents, "chunks": self.index_chunks},
            "seconds": round(self.seconds, 3),
            "timings_s": {k: round(v, 3) for k, v in self.timings.items()},
        }
