"""One of two processes writing to the same index at once: `python -m tests.scale.write_proc TAG N BARRIER`.

The store comes from the environment (LANCEDB_URI and AWS_*), as in every
Docent process. Each of the N steps is one upsert of a manifest row (LanceDB
merge-insert) and one append of window rows, both committed separately, so two
such processes interleave many commits on the same two tables. Both wait at a
barrier (a file per writer in the folder BARRIER) once their store is open, so a
slow start-up on a busy machine cannot leave one writer finished before the
other begins.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from rag_system.chunking.chunker import Chunk
from rag_system.config import load_settings
from rag_system.indexing.manifest import FileRecord, Manifest
from rag_system.indexing.store import open_store, table_name
from rag_system.indexing.windows import WINDOWS_SUFFIX, WindowTable


def main(tag: str, count: int, barrier: Path, writers: int = 2) -> int:
    db = open_store(load_settings(dotenv_path=None))
    manifest = Manifest.open_or_create(db, "conc")
    windows = WindowTable(db.open_table(table_name("conc") + WINDOWS_SUFFIX))
    (barrier / tag).touch()
    deadline = time.monotonic() + 120
    while len(list(barrier.iterdir())) < writers and time.monotonic() < deadline:
        time.sleep(0.005)
    started = time.time()
    for i in range(count):
        doc = f"{tag}-{i}"
        chunk = Chunk(chunk_id=f"{doc}:0", chunk_index=0, text=f"note {doc} from writer {tag}", page_start=1,
                      page_end=1, heading_path="", block_type="paragraph", token_count=5)
        windows.add(doc, f"{doc}.txt", [chunk])
        manifest.upsert(FileRecord(path=f"/{tag}/{i}.txt", document_id=doc, document_name=f"{doc}.txt",
                                   file_type="txt", size=10, pages=1, chunks=1, chunker_version="t",
                                   embedding_model="m", ocr_engine="", indexed_at="2026-01-01T00:00:00+00:00"))
    # The test checks that the two writers' spans overlapped (else nothing was concurrent).
    sys.stdout.write(f"{started} {time.time()}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2]), Path(sys.argv[3])))
