"""Nothing unchecked on screen: every change of a streaming answer, watched in Chromium.

The model is a scripted OpenAI-compatible server (testkit/scripted_llm.py: an external product's
wire format, words streamed at a reading pace) that writes three sentences over a real index: a
true one, one the policy contradicts, and another true one. Everything else is real: the RAG API
checks each finished sentence before it streams it, the gateway saves the turn, the web app paints
what arrives. A MutationObserver records the answer's text at every change; no sentence may ever
be on screen that is not in the final answer, and the contradicted one never appears. Stop,
pressed as the first sentence appears, keeps only that sentence, and the gateway's POST /verify
finds it supported by the index.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from testkit.client import Client
from testkit.scripted_llm import ScriptedLLM
from tests.browser.conftest import Stack, started_stack
from tests.browser.helpers import new_chat_on, shot, wait_until

pytestmark = pytest.mark.slow

POLICY = ("Leave policy.\n\nSick leave is paid at 100 percent of base salary for the first 12 weeks of an absence. "
          "Contractors engaged through an agency are not covered by this policy. Parental leave is 18 weeks per "
          "child, of which 6 weeks are fully paid.\n")
QUESTION = "How long is parental leave, and how much of it is fully paid?"
TRUE_FIRST = "Parental leave is 18 weeks per child"
WRONG = "Contractors engaged through an agency are covered by this policy"
TRUE_LAST = "Of those 18 weeks, 6 weeks are fully paid"
#: Records the streaming answer's text at every change.
RECORD = """() => { window.__seen = [];
    const watch = () => { const a = document.querySelector('.msg.assistant:last-child .answer');
        if (!a) { requestAnimationFrame(watch); return; }
        new MutationObserver(() => window.__seen.push(a.innerText))
            .observe(a, { childList: true, subtree: true, characterData: true }); };
    watch(); }"""


def three_sentences(messages: list[dict[str, Any]]) -> str:
    """A true sentence, one the policy contradicts, a true one; each cited as the prompt numbers the policy."""
    found = re.search(r"\[(\d+)\][^\n]*policy\.txt", messages[-1]["content"])
    n = found.group(1) if found else "1"
    return f"{TRUE_FIRST} [{n}]. {WRONG} [{n}]. {TRUE_LAST} [{n}]."


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with ScriptedLLM(three_sentences, pace_s=0.2) as llm, started_stack(tmp_path_factory, "checked", **llm.rag_env()) as up:
        yield up


@pytest.fixture(scope="module")
def policy_index(stack: Stack) -> str:
    gw = Client(stack.gateway.url)
    iid = gw.post("/indexes", {"name": "Leave policy"}).json["index_id"]
    assert gw.upload(f"/indexes/{iid}/upload", [("policy.txt", POLICY.encode())]).status == 200
    job = gw.post(f"/indexes/{iid}/build").json["job_id"]
    wait_until(lambda: gw.get(f"/indexes/{iid}/jobs/{job}").json["state"] == "done", 240)
    return iid


def sentences(text: str) -> list[str]:
    """The sentences of displayed text, without citation chips' numbers."""
    plain = re.sub(r"\[\d+(?:\s*,\s*\d+)*\]", " ", text.replace("\n", " "))
    plain = re.sub(r"(?<=[a-z])\s*\d+\s*(?=[.!?](?:\s|$))", "", plain)  # a chip rendered as its number
    plain = re.sub(r"\s+(?=[.!?,;])", "", plain)
    return [" ".join(s.split()).rstrip(".") for s in re.split(r"(?<=[.!?])\s+", plain) if len(s.split()) >= 3]


def ask_the_scripted_model(page: Any, stack: Stack, index_id: str) -> None:
    page.goto(stack.url + "/#/settings")
    page.wait_for_selector("select[name=backend] option[value=openai]", state="attached")
    page.select_option("select[name=backend]", "openai")
    new_chat_on(page, index_id)
    page.evaluate(RECORD)
    page.fill("#question", QUESTION)
    page.click("#send")


def test_no_sentence_shown_while_streaming_is_missing_from_the_final_answer(page: Any, stack: Stack,
                                                                            policy_index: str) -> None:
    ask_the_scripted_model(page, stack, policy_index)
    page.wait_for_selector(".msg.assistant[data-state=complete]", timeout=120_000)
    shot(page, "checked-stream-complete")
    final = sentences(page.inner_text(".msg.assistant .answer"))
    seen = [s for s in page.evaluate("window.__seen") if s.strip()]
    assert len(seen) >= 2, seen  # the answer grew while it streamed: sentence by sentence
    shown = {s for snapshot in seen for s in sentences(snapshot)}
    assert shown <= set(final), (shown - set(final), final)  # nothing on screen was taken back
    assert not any(WRONG in s for s in shown | set(final)), (seen, final)  # the contradicted one never showed
    assert TRUE_FIRST in final and TRUE_LAST in final, final
    assert page.locator(".msg.assistant .badge").first.get_attribute("data-source") == "llm_repaired"
    assert not page.errors, page.errors


def test_stop_keeps_only_checked_sentences(page: Any, stack: Stack, policy_index: str) -> None:
    gw = Client(stack.gateway.url)
    ask_the_scripted_model(page, stack, policy_index)
    # Stop in the same evaluation that sees the first checked sentence on screen
    page.wait_for_function("""() => { const m = document.querySelector('.msg.assistant[data-state=streaming]');
        if (!m || !m.querySelector('.answer').textContent.trim()) return false;
        document.querySelector('#stop').click(); return true; }""", timeout=120_000)
    page.wait_for_selector(".msg.assistant[data-state=stopped]", timeout=60_000)
    shown = page.inner_text(".msg.assistant .answer")
    assert sentences(shown) == [TRUE_FIRST], shown
    sid = page.url.split("#/chat/")[1]
    wait_until(lambda: len(gw.get(f"/sessions/{sid}").json["messages"]) == 2, 60)
    saved = gw.get(f"/sessions/{sid}").json["messages"][1]
    assert saved["metadata"]["status"] == "cancelled", saved["metadata"]
    assert sentences(saved["content"]) == [TRUE_FIRST], saved["content"]  # nothing but what was shown is kept
    checked = gw.post("/verify", {"text": saved["content"], "index": policy_index})
    assert checked.status == 200 and checked.json["supported"], checked.json
    assert not page.errors, page.errors
