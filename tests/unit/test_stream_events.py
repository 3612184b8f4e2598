"""The answer stream's one event table (rag_system/generation/events.py) against everything that names
an event: the emit calls in the source, the stage table, Documentation/api.md and the web app."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from backend.legacy import _EVENT_OF
from common.errors import error_body
from rag_system.agent.stages import STAGES, Stages
from rag_system.generation.events import EVENTS, UndeclaredEvent, checked, problem

ROOT = Path(__file__).resolve().parents[2]
#: The one place an event name is not a literal: the stage wrapper builds `<stage>_started` / `_done`.
COMPUTED_NAMES = {ROOT / "rag_system/agent/stages.py"}


def _emit_calls() -> list[tuple[Path, ast.Call]]:
    found = []
    for path in sorted((ROOT / "rag_system").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and node.args and (
                    (isinstance(node.func, ast.Name) and node.func.id == "emit")
                    or (isinstance(node.func, ast.Attribute) and node.func.attr == "emit")):
                found.append((path, node))
    return found


def test_every_emit_in_the_source_is_declared_with_its_fields() -> None:
    calls = _emit_calls()
    assert len(calls) > 30  # the scan sees the answering path, not an empty tree
    wrong = []
    for path, call in calls:
        where = f"{path.relative_to(ROOT)}:{call.lineno}"
        name = call.args[0]
        if not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
            if path not in COMPUTED_NAMES:
                wrong.append(f"{where}: the event name is not a literal")
            continue
        if name.value not in EVENTS:
            wrong.append(f"{where}: {name.value!r} is not in EVENTS")
            continue
        data = call.args[1] if len(call.args) > 1 else None
        if isinstance(data, ast.Dict):
            spec = EVENTS[name.value]
            keys = {k.value for k in data.keys if isinstance(k, ast.Constant)}
            spread = any(k is None for k in data.keys)  # {**report}: the rest is checked when it runs
            if not spread and (missing := set(spec.fields) - keys):
                wrong.append(f"{where}: {name.value} lacks {sorted(missing)}")
            if not spec.open and (extra := keys - set(spec.fields) - set(spec.optional)):
                wrong.append(f"{where}: {name.value} has undeclared {sorted(extra)}")
    assert wrong == []


def test_the_stage_events_are_declared() -> None:
    for spec in STAGES.values():
        if spec.event is not None:
            assert {f"{spec.event}_started", f"{spec.event}_done"} <= set(EVENTS), spec


def test_the_checked_sink_refuses_what_the_table_does_not_declare() -> None:
    seen: list[tuple[str, dict[str, object]]] = []
    emit = checked(lambda event, data: seen.append((event, data)))
    emit("token", {"text": "Hello."})
    with pytest.raises(UndeclaredEvent, match="undeclared stream event 'tokens'"):
        emit("tokens", {"text": "Hello."})
    with pytest.raises(UndeclaredEvent, match="lacks text"):
        emit("token", {})
    with pytest.raises(UndeclaredEvent, match="undeclared fields piece"):
        emit("token", {"text": "a", "piece": "a"})
    emit("citations", {"stage": "first", "valid": True, "problems": []})  # an open payload
    assert [e for e, _ in seen] == ["token", "citations"]
    assert checked(emit) is emit  # wrapping twice checks once


def test_a_stage_announces_through_the_table() -> None:
    seen: list[str] = []
    stages = Stages(lambda event, data: seen.append(event))
    assert stages.run("rerank", lambda: 3, started={"count": 3}, done=lambda n: {"kept": n, "warnings": [],
                                                                                   "reranked": True}) == 3
    assert seen == ["rerank_started", "rerank_done"] and "rerank_ms" in stages.timings_ms
    with pytest.raises(UndeclaredEvent):
        stages.run("expand", lambda: [], started={"count": 1})  # no `window`


def test_the_api_error_frame_matches_its_declaration() -> None:
    assert problem("error", error_body("index_not_found", "no such index", turn_id="t1")) is None


def _api_section() -> str:
    text = (ROOT / "Documentation/api.md").read_text()
    start = text.index("`/chat/stream` takes the same body")
    return text[start:text.index("**Client disconnects.**", start)]


def test_api_md_documents_exactly_the_declared_events_and_fields() -> None:
    rows = re.findall(r"^\| `(\w+)` \| (.*) \|$", _api_section(), re.M)
    documented = {name: cell for name, cell in rows}
    assert len(documented) == len(rows)  # each event once
    assert set(documented) == set(EVENTS)
    for name, cell in documented.items():
        spec = EVENTS[name]
        listed = re.sub(r"\(.*?\)", "", cell)  # explanations in parentheses name no fields
        optional = re.findall(r"\[`(\w+)`\]", listed)
        required = re.findall(r"(?<!\[)`(\w+)`(?!\])", listed)
        assert (tuple(required), tuple(optional), "…" in listed) == (spec.fields, spec.optional, spec.open), name


def test_api_md_event_order_names_only_declared_events() -> None:
    blocks = re.findall(r"```\n(.*?)```", _api_section(), re.S)
    names: set[str] = set()
    for block in blocks:
        bare = re.sub(r"\(.*?\)|\{.*", " ", block)  # explanations, example data and what follows it
        names |= set(re.findall(r"[a-z][a-z_]*[a-z]", bare))
    assert names == set(EVENTS)


def _chat_js() -> str:
    return (ROOT / "frontend/static/js/chat.js").read_text()


def test_the_web_app_handles_or_deliberately_ignores_every_event() -> None:
    source = _chat_js()
    handled = set(re.findall(r'case "(\w+)":', source))
    passive_list = re.search(r"const PASSIVE_EVENTS = new Set\(\[(.*?)\]\)", source, re.S)
    assert passive_list is not None
    passive = set(re.findall(r'"(\w+)"', passive_list.group(1)))
    assert handled & passive == set()  # each event has one treatment
    assert handled | passive == set(EVENTS)


def test_the_phase_table_names_only_declared_events() -> None:
    source = (ROOT / "frontend/static/js/phases.js").read_text()
    table = re.search(r"const PHASE_OF = \{(.*?)\};", source, re.S)
    assert table is not None
    names = set(re.findall(r"(\w+):", re.sub(r"//.*", "", table.group(1))))
    # `first_token` is no stream event: a saved turn's steps put it in place of the tokens (api.md)
    assert names - {"first_token"} <= set(EVENTS) and "token" in names


def test_the_gateways_localgpt_steps_name_declared_events() -> None:
    """The gateway (which cannot import the RAG API) turns stored events into localGPT's steps by name."""
    assert set(_EVENT_OF.values()) <= set(EVENTS)


def test_the_gateways_stream_relays_read_declared_events() -> None:
    """The localGPT LLM-chat relay and the OpenAI door read the RAG API's frames by event name."""
    read = set()
    for name in ("handlers_llm.py", "handlers_openai.py"):
        source = (ROOT / "backend" / name).read_text()
        read |= set(re.findall(r'event (?:==|!=) "(\w+)"', source))
        read |= {n for group in re.findall(r"event in \(([^)]*)\)", source) for n in re.findall(r'"(\w+)"', group)}
    assert {"token", "complete", "error"} <= read <= set(EVENTS)
