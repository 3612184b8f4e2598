"""Nothing unchecked on screen: every change of a streaming answer, watched in Chromium.

A real model (the packaged 0.5B GGUF, chosen in Settings) answers over a real PDF (the shared
Northwind leave policy). A MutationObserver records the answer's text at every change while it
streams; every sentence that was ever on screen must be in the final answer (a sentence shown and
then withdrawn would be an unchecked one). Stop, pressed as the first sentence appears, keeps only
what was shown: the saved turn holds the same text, and each of its sentences is supported when the
gateway's POST /verify checks it against the index.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from testkit import EVAL_DATA
from testkit.client import Client
from tests.browser.conftest import Stack
from tests.browser.helpers import new_chat_on, shot, wait_until
from tests.browser.test_experience import build
from tests.browser.test_web_app import choose_real_model

POLICY = EVAL_DATA / "localgpt" / "corpora" / "northwind_leave_policy.pdf"
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not POLICY.is_file(), reason=f"shared eval data not at {EVAL_DATA}")]

QUESTION = "How many weeks of parental leave does an employee get, and how many of them are fully paid?"
#: Records the streaming answer's text at every change, until it settles.
RECORD = """() => { window.__seen = [];
    const watch = () => { const a = document.querySelector('.msg.assistant:last-child .answer');
        if (!a) { requestAnimationFrame(watch); return; }
        const note = () => window.__seen.push(a.innerText);
        new MutationObserver(note).observe(a, { childList: true, subtree: true, characterData: true }); };
    watch(); }"""


@pytest.fixture(scope="module")
def policy_index(stack: Stack) -> str:
    return build(Client(stack.gateway.url), "Leave policy", [(POLICY.name, POLICY.read_bytes())])


def sentences(text: str) -> list[str]:
    """The sentences of displayed text, without citation chips' numbers or list bullets."""
    plain = re.sub(r"\[\d+(?:\s*,\s*\d+)*\]|\s\d+\s*(?=[.;,]|$)", " ", text.replace("\n", " "))
    return [" ".join(s.split()) for s in re.split(r"(?<=[.!?])\s+", plain) if len(s.split()) >= 3]


def test_no_sentence_shown_while_streaming_is_missing_from_the_final_answer(page: Any, stack: Stack,
                                                                            policy_index: str) -> None:
    choose_real_model(page, stack)
    new_chat_on(page, policy_index)
    page.evaluate(RECORD)
    page.fill("#question", QUESTION)
    page.click("#send")
    page.wait_for_selector(".msg.assistant[data-state=complete]", timeout=300_000)
    shot(page, "checked-stream-complete")
    final = " ".join(page.inner_text(".msg.assistant .answer").split())
    seen = [s for s in page.evaluate("window.__seen") if s.strip()]
    assert seen, "the answer's text changed on screen at least once"
    shown = {s for snapshot in seen for s in sentences(snapshot)}
    withdrawn = [s for s in shown if s not in " ".join(sentences(final))]
    assert not withdrawn, (withdrawn, final)
    assert page.locator(".msg.assistant .badge").first.get_attribute("data-source") != "refusal", final
    assert not page.errors, page.errors


def test_stop_keeps_only_checked_sentences(page: Any, stack: Stack, policy_index: str) -> None:
    gw = Client(stack.gateway.url)
    choose_real_model(page, stack)
    new_chat_on(page, policy_index)
    page.fill("#question", QUESTION)
    page.click("#send")
    # Stop in the same evaluation that sees the first checked sentence on screen
    page.wait_for_function("""() => { const m = document.querySelector('.msg.assistant[data-state=streaming]');
        if (!m || !m.querySelector('.answer').textContent.trim()) return false;
        document.querySelector('#stop').click(); return true; }""", timeout=300_000)
    page.wait_for_selector(".msg.assistant[data-state=stopped]", timeout=60_000)
    shown = page.inner_text(".msg.assistant .answer")
    assert shown.strip()
    sid = page.url.split("#/chat/")[1]
    wait_until(lambda: len(gw.get(f"/sessions/{sid}").json["messages"]) == 2, 60)
    saved = gw.get(f"/sessions/{sid}").json["messages"][1]
    if saved["metadata"]["status"] == "cancelled":  # nothing but what was shown is kept
        assert sentences(saved["content"]) == sentences(shown), (saved["content"], shown)
    else:  # the answer had finished before the server saw the disconnect: what was shown is in it
        assert saved["metadata"]["status"] == "complete"
        assert all(s in " ".join(sentences(saved["content"])) for s in sentences(shown)), (saved["content"], shown)
    checked = gw.post("/verify", {"text": shown, "index": policy_index})  # each sentence on screen is checked
    assert checked.status == 200, checked.json
    assert all(s["verdict"] == "supported" for s in checked.json["sentences"] if s.get("checked", True)), checked.json
    page.evaluate("""() => { const s = JSON.parse(localStorage.getItem('docent.settings.v1')); s.backend = '';
        localStorage.setItem('docent.settings.v1', JSON.stringify(s)); }""")
    assert not page.errors, page.errors
