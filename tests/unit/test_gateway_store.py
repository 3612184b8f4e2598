"""The gateway's SQLite store and its migrations (real SQLite files in tmp)."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from backend.migrations import SCHEMA_VERSION, SchemaTooNewError, migrate, schema_version
from backend.store import DEFAULT_TITLE, Store, TurnConflictError


@pytest.fixture()
def store(tmp_path: Path) -> Store:
    s = Store(tmp_path / "docent.db")
    yield s
    s.close()


def test_migrations_bring_a_new_database_to_the_current_version(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "a.db", isolation_level=None)
    assert schema_version(conn) == 0
    assert migrate(conn) == SCHEMA_VERSION
    assert schema_version(conn) == SCHEMA_VERSION
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"sessions", "messages", "indexes", "index_documents", "session_indexes", "index_jobs"} <= tables
    assert migrate(conn) == 0  # idempotent


def test_a_version_1_database_gains_page_counts_and_keeps_its_rows(tmp_path: Path) -> None:
    from backend.migrations import MIGRATIONS, _statements

    path = tmp_path / "v1.db"
    conn = sqlite3.connect(path, isolation_level=None)
    for statement in _statements(MIGRATIONS[0]):
        conn.execute(statement)
    conn.execute("PRAGMA user_version = 1")
    conn.execute("INSERT INTO indexes (id, name, created_at, updated_at, vector_table_name) "
                 "VALUES ('i1', 'Old', 't', 't', 'idx_i1')")
    conn.execute("INSERT INTO index_documents (id, index_id, filename, stored_path, sha256, size, created_at) "
                 "VALUES ('d1', 'i1', 'a.pdf', '/u/a', 'x', 3, 't')")
    conn.close()
    s = Store(path)
    doc = s.get_index("i1")["documents"][0]
    assert (doc["filename"], doc["page_count"], doc["error"]) == ("a.pdf", None, None)
    s.set_document_result("d1", "indexed", 7, None)
    assert s.get_index("i1")["page_count"] == 7
    s.set_document_result("d1", "failed", None, "no text found")  # an unknown count keeps the last one
    doc = s.get_index("i1")["documents"][0]
    assert (doc["status"], doc["page_count"], doc["error"]) == ("failed", 7, "no text found")
    assert s.get_index("i1")["page_count"] == 0  # a failed file's pages are not searchable
    s.close()


def test_a_newer_database_is_refused(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "b.db", isolation_level=None)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(SchemaTooNewError):
        migrate(conn)


def test_wal_and_foreign_keys(store: Store, tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "docent.db")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    with store._conn() as c:
        assert c.execute("PRAGMA foreign_keys").fetchone()[0] == 1


def test_reopening_keeps_data(tmp_path: Path) -> None:
    s = Store(tmp_path / "x.db")
    sid = s.create_session("Kept")["id"]
    s.close()
    again = Store(tmp_path / "x.db")
    assert again.get_session(sid)["title"] == "Kept"
    again.close()


def test_session_crud(store: Store) -> None:
    s = store.create_session()
    assert s["title"] == DEFAULT_TITLE and s["message_count"] == 0
    assert set(s) == {"id", "title", "created_at", "updated_at", "model_used", "message_count"}
    assert store.rename_session(s["id"], "Renamed")["title"] == "Renamed"
    assert [x["id"] for x in store.list_sessions()] == [s["id"]]
    assert store.delete_session(s["id"]) == []
    assert store.get_session(s["id"]) is None
    assert store.delete_session(s["id"]) is None
    assert store.rename_session("nope", "x") is None


def test_first_question_titles_a_new_chat(store: Store) -> None:
    s = store.create_session()
    store.add_user_message(s["id"], "t1", "What is the notice period in the lease agreement of 2021 exactly?")
    title = store.get_session(s["id"])["title"]
    assert title.startswith("What is the notice period") and len(title) <= 50
    named = store.create_session("Mine")
    store.add_user_message(named["id"], "t2", "hello")
    assert store.get_session(named["id"])["title"] == "Mine"


def test_turns_are_idempotent_and_ordered(store: Store) -> None:
    sid = store.create_session()["id"]
    store.add_user_message(sid, "turn-1", "question one")
    created, (u, a) = store.save_turn(sid, "turn-1", "question one", "answer one", {"citations": [{"n": 1}]})
    assert created
    created_again, (u2, a2) = store.save_turn(sid, "turn-1", "question one", "other", {"citations": []})
    assert not created_again and (u2["id"], a2["id"]) == (u["id"], a["id"])
    store.save_turn(sid, "turn-2", "question two", "answer two", {})
    msgs = store.get_messages(sid)
    assert [(m["sender"], m["content"]) for m in msgs] == [
        ("user", "question one"), ("assistant", "answer one"), ("user", "question two"), ("assistant", "answer two")]
    assert msgs[1]["metadata"]["citations"] == [{"n": 1}] and msgs[1]["metadata"]["turn_id"] == "turn-1"
    assert set(msgs[0]) >= {"id", "content", "sender", "timestamp", "metadata"}
    assert store.get_session(sid)["message_count"] == 4


def test_turn_id_of_another_session_conflicts(store: Store) -> None:
    a, b = store.create_session()["id"], store.create_session()["id"]
    store.save_turn(a, "shared", "q", "a", {})
    with pytest.raises(TurnConflictError):
        store.save_turn(b, "shared", "q", "a", {})


def test_concurrent_saves_of_one_turn_store_it_once(store: Store) -> None:
    sid = store.create_session()["id"]
    barrier = threading.Barrier(8)

    def save() -> None:
        barrier.wait()
        store.save_turn(sid, "same-turn", "q", "a", {})

    threads = [threading.Thread(target=save) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [m["sender"] for m in store.get_messages(sid)] == ["user", "assistant"]


def test_indexes_documents_links_and_cascades(store: Store) -> None:
    sid = store.create_session()["id"]
    idx = store.create_index("Manuals", "desc", {"status": "created"})
    assert idx["vector_table_name"] == f"idx_{idx['id']}" and len(idx["id"]) == 32
    d1 = store.add_document(filename="a.pdf", stored_path="/u/x/a", sha256="s" * 64, size=3, index_id=idx["id"])
    same = store.add_document(filename="a.pdf", stored_path="/u/x/a", sha256="s" * 64, size=3, index_id=idx["id"])
    assert same["id"] == d1["id"]
    assert store.link(sid, idx["id"]) and not store.link(sid, idx["id"])
    assert store.session_index_ids(sid) == [idx["id"]]
    assert store.unlink(sid, idx["id"]) and not store.unlink(sid, idx["id"])
    assert store.session_index_ids(sid) == [] and store.link(sid, idx["id"])
    store.add_job("job1", idx["id"], "queued")
    store.update_index_metadata(idx["id"], {"status": "building"})
    got = store.get_index(idx["id"])
    assert got["metadata"] == {"status": "building"} and got["documents"][0]["filename"] == "a.pdf"
    assert store.find_document("s" * 64)["id"] == d1["id"] and store.find_document(d1["id"])["id"] == d1["id"]
    assert store.delete_index(idx["id"]) == ["/u/x/a"]
    assert store.session_index_ids(sid) == [] and store.get_job("job1") is None
    assert store.find_document(d1["id"]) is None


def test_a_mailbox_message_id_finds_its_file(store: Store) -> None:
    """Citations of message 3 of a mailbox carry `<sha256>-3`; page, file and access routes want the file."""
    idx = store.create_index("Mail", "", {"status": "created"})
    sha = "0123456789abcdef" * 4
    doc = store.add_document(filename="team.mbox", stored_path="/u/x/team.mbox", sha256=sha, size=9,
                             index_id=idx["id"])
    assert store.find_document(f"{sha}-3")["id"] == doc["id"]
    assert [d["id"] for d in store.documents_matching(f"{sha}-3")] == [doc["id"]]
    assert store.find_document(f"{sha}-x") is None and store.find_document(f"{sha[:-1]}-3") is None


def test_session_uploads_become_an_index(store: Store) -> None:
    sid = store.create_session()["id"]
    store.add_document(filename="n.txt", stored_path="/u/s/n", sha256="a" * 64, size=1, session_id=sid)
    idx = store.create_index("S docs", session_id=sid)
    assert store.assign_pending_documents(sid, idx["id"]) == 1
    assert store.get_index(idx["id"])["documents"][0]["filename"] == "n.txt"
    assert store.session_documents(sid)[0]["index_id"] == idx["id"]
    assert store.delete_session(sid) == []  # indexed uploads stay with their index
    assert store.get_index(idx["id"])["session_id"] is None


def test_deleting_a_session_returns_its_pending_uploads(store: Store) -> None:
    sid = store.create_session()["id"]
    store.add_document(filename="n.txt", stored_path="/u/s/n", sha256="a" * 64, size=1, session_id=sid)
    store.save_turn(sid, "t", "q", "a", {})
    assert store.delete_session(sid) == ["/u/s/n"]
    assert store.stats() == {"sessions": 0, "messages": 0, "indexes": 0, "documents": 0}


def test_messages_need_an_existing_session(store: Store) -> None:
    with pytest.raises(sqlite3.IntegrityError):
        store.save_turn("missing", "t", "q", "a", {})
