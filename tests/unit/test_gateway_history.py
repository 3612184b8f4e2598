"""The conversation the RAG API resolves follow-ups against: answered turns only (backend/history.py)."""

from __future__ import annotations

from pathlib import Path

from backend.history import conversation
from backend.store import Store


def test_only_answered_turns_are_the_conversation(tmp_path: Path) -> None:
    store = Store(tmp_path / "docent.db")
    sid = store.create_session()["id"]
    store.save_turn(sid, "t1", "What is the highest tide in March?", "6.4 metres [1].",
                    {"status": "complete", "route_reason": "document_question"})
    store.save_turn(sid, "t2", "thanks", "(failed: internal error)", {"status": "error"})
    store.save_turn(sid, "t3", "and in June?", "(cancelled before an answer was produced)", {"status": "cancelled"})
    store.save_turn(sid, "t4", "thanks!", "You're welcome!", {"status": "complete", "gate": "smalltalk:thanks"})
    store.save_turn(sid, "t5", "hello", "Hello!", {"status": "complete", "events": [
        {"type": "complete", "data": {"route_reason": "smalltalk:greeting"}}]})
    store.add_user_message(sid, "t6", "a question still being answered")
    history = conversation(store, sid, limit=10)
    assert [(m["role"], m["content"]) for m in history] == [("user", "What is the highest tide in March?"),
                                                            ("assistant", "6.4 metres [1].")]
    store.close()
