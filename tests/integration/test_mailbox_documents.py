"""A mailbox is one file and many documents: each message is indexed as `<file sha256>-<n>`.

Built into a real index with the packaged embedder: each message's chunks carry its own document
id and count from chunk 0, so context expansion never joins one message to the next; a filter or
a document view naming the file still finds every message, one naming a message finds that one;
a changed mailbox replaces all its messages in one build and a deleted one leaves nothing behind.
"""

from __future__ import annotations

import hashlib
import mailbox
from pathlib import Path

import pytest

from common.document_ids import file_id, part_id
from rag_system.config import load_settings
from rag_system.indexing.builder import build_index
from rag_system.indexing.manifest import Manifest
from rag_system.indexing.store import ChunkTable, open_store
from rag_system.retrieval.engine import RetrievalEngine, mixed_versions
from rag_system.retrieval.expand import expand_neighbours
from testkit.formats import mail_message

MESSAGES = (
    ("Ines Alvarez <ines@example.org>", "Ferry timetable",
     "The morning ferry to Skerholm leaves the north pier at 07:15 on weekdays."),
    ("Tom Becker <tom@example.org>", "Harbour crane",
     "The harbour crane is out of service until the gearbox arrives from Rotterdam."),
    ("Ana Silva <ana@example.org>", "Lighthouse visit",
     "Visitors may climb the lighthouse on Saturdays when the keeper is present."),
)
LATER = ("Ola Nordmann <ola@example.org>", "Ferry timetable change",
         "From June the morning ferry leaves at 07:40 because the pier is being repaired.")


def _write_mbox(path: Path, messages: tuple[tuple[str, str, str], ...]) -> str:
    if path.exists():
        path.unlink()
    box = mailbox.mbox(str(path))
    try:
        for sender, subject, text in messages:
            box.add(mail_message(sender, subject, text))
        box.flush()
    finally:
        box.close()
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture()
def mail_index(tmp_path: Path, embedder):  # type: ignore[no-untyped-def]
    folder = tmp_path / "mail"
    folder.mkdir()
    sha = _write_mbox(folder / "harbour.mbox", MESSAGES)
    (folder / "notes.txt").write_text("The harbour office opens at nine.\n", encoding="utf-8")
    settings = load_settings(environ={"DOCENT_DATA_DIR": str(tmp_path / "data")}, dotenv_path=None)
    summary = build_index([folder], "mail", settings, embedder=embedder)
    assert summary.added == 2 and not summary.failed, summary.to_json()
    return settings, folder, sha


def _rows(settings, where: str | None = None) -> list[dict]:  # type: ignore[no-untyped-def]
    table = ChunkTable.open(open_store(settings), "mail")
    query = table.table.search()
    if where:
        query = query.where(where)
    return query.select(["document_id", "document_name", "chunk_index", "page_start", "text"]).limit(None).to_list()


def test_each_message_is_its_own_document_in_one_manifest_entry(mail_index) -> None:  # type: ignore[no-untyped-def]
    settings, _, sha = mail_index
    by_id: dict[str, list[dict]] = {}
    for row in _rows(settings):
        by_id.setdefault(row["document_id"], []).append(row)
    parts = {part_id(sha, n) for n in (1, 2, 3)}
    assert parts <= set(by_id) and sha not in by_id, sorted(by_id)
    for n, (_, subject, text) in enumerate(MESSAGES, start=1):
        rows = by_id[part_id(sha, n)]
        assert min(r["chunk_index"] for r in rows) == 0  # each message counts its chunks from 0
        assert {r["page_start"] for r in rows} == {n} and {r["document_name"] for r in rows} == {"harbour.mbox"}
        assert any(text in r["text"] for r in rows) and not any(
            other in r["text"] for r in rows for _, _, other in MESSAGES if other != text)
    records = Manifest.open_existing(open_store(settings), "mail").records()  # type: ignore[union-attr]
    mbox = [r for r in records.values() if r.document_name == "harbour.mbox"]
    assert [(r.document_id, r.pages) for r in mbox] == [(sha, 3)]


def test_expansion_stays_inside_the_message(mail_index, embedder) -> None:  # type: ignore[no-untyped-def]
    settings, _, sha = mail_index
    engine = RetrievalEngine(settings, embedder)
    hits = engine.retrieve("mail", "harbour crane gearbox Rotterdam", engine.options(k=3)).candidates
    top = hits[0]
    assert top.document_id == part_id(sha, 2), [(h.document_id, h.text[:60]) for h in hits]
    (passage,) = expand_neighbours(engine.table("mail"), [top], 2)
    assert MESSAGES[1][2] in passage.text
    assert MESSAGES[0][2] not in passage.text and MESSAGES[2][2] not in passage.text, passage.text
    assert not mixed_versions(hits)  # two messages of one mailbox are not two versions of it


def test_filters_and_document_rows_name_the_file_or_one_message(mail_index, embedder) -> None:  # type: ignore[no-untyped-def]
    settings, _, sha = mail_index
    engine = RetrievalEngine(settings, embedder)
    whole = engine.retrieve("mail", "ferry crane lighthouse", engine.options(k=10, filters={"document_id": sha}))
    assert {file_id(c.document_id) for c in whole.candidates} == {sha}
    assert {c.document_id for c in whole.candidates} == {part_id(sha, n) for n in (1, 2, 3)}
    one = engine.retrieve("mail", "ferry crane lighthouse",
                          engine.options(k=10, filters={"document_id": part_id(sha, 3)}))
    assert {c.document_id for c in one.candidates} == {part_id(sha, 3)}
    rows = engine.table("mail").document_rows(sha, ["text", "page_start"])
    assert [r["page_start"] for r in rows] == sorted(r["page_start"] for r in rows)
    assert [next(i for i, m in enumerate(MESSAGES) if m[2] in r["text"]) for r in rows
            if any(m[2] in r["text"] for m in MESSAGES)] == [0, 1, 2]


def test_a_changed_mailbox_replaces_every_message_and_a_deleted_one_leaves_nothing(  # type: ignore[no-untyped-def]
        mail_index, embedder) -> None:
    settings, folder, old = mail_index
    new = _write_mbox(folder / "harbour.mbox", (*MESSAGES, LATER))
    summary = build_index([folder], "mail", settings, embedder=embedder)
    assert summary.updated == 1 and summary.unchanged == 1, summary.to_json()
    ids = {r["document_id"] for r in _rows(settings) if r["document_name"] == "harbour.mbox"}
    assert ids == {part_id(new, n) for n in (1, 2, 3, 4)}, ids  # nothing of the old version is left
    assert not any(file_id(i) == old for i in ids)
    (folder / "harbour.mbox").unlink()
    summary = build_index([folder], "mail", settings, embedder=embedder)
    assert summary.removed == 1
    assert {r["document_name"] for r in _rows(settings)} == {"notes.txt"}
