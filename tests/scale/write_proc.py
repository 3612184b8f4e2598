"""One of two processes writing to the same index at once: `python -m tests.scale.write_proc TAG N SIGNALS`.

The store comes from the environment (LANCEDB_URI and AWS_*), as in every
Docent process. Each step is one upsert of a manifest row (LanceDB
merge-insert) and one append of window rows, both committed separately, so two
such processes interleave many commits on the same two tables.

A writer makes at least N steps and goes on until the other writer has
committed its first step (a file `<tag>.first` in the folder SIGNALS). So each
writer's span contains the other's first commit and the spans overlap however
the machine schedules the two start-ups: a fixed step count left one finished
before the other began on a busy CI machine. It prints its span and its step
count; the test checks that every row of every step survived.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from rag_system.chunking.chunk import Chunk
from rag_system.config import load_settings
from rag_system.indexing.manifest import FileRecord, Manifest
from rag_system.indexing.store import open_store, table_name
from rag_system.indexing.windows import WINDOWS_SUFFIX, WindowTable

_GIVE_UP_S = 120.0  # the other writer died: stop rather than write forever (the test then fails on it)


def main(tag: str, count: int, signals: Path) -> int:
    db = open_store(load_settings(dotenv_path=None))
    manifest = Manifest.open_or_create(db, "conc")
    windows = WindowTable(db.open_table(table_name("conc") + WINDOWS_SUFFIX))
    started = time.time()
    deadline = time.monotonic() + _GIVE_UP_S
    i = 0
    while i < count or (not _other_started(signals, tag) and time.monotonic() < deadline):
        doc = f"{tag}-{i}"
        chunk = Chunk(chunk_id=f"{doc}:0", chunk_index=0, text=f"note {doc} from writer {tag}", page_start=1,
                      page_end=1, heading_path="", block_type="paragraph", token_count=5)
        windows.add([doc], f"{doc}.txt", [chunk])
        manifest.upsert(FileRecord(path=f"/{tag}/{i}.txt", document_id=doc, document_name=f"{doc}.txt",
                                   file_type="txt", size=10, pages=1, chunks=1, chunker_version="t",
                                   embedding_model="m", ocr_engine="", indexed_at="2026-01-01T00:00:00+00:00"))
        if i == 0:
            (signals / f"{tag}.first").touch()
        i += 1
    sys.stdout.write(f"{started} {time.time()} {i}\n")
    return 0


def _other_started(signals: Path, tag: str) -> bool:
    return any(p.name.endswith(".first") and p.name != f"{tag}.first" for p in signals.iterdir())


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2]), Path(sys.argv[3])))
