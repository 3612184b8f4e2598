"""The frictions a first trial ran into, each fixed and shown in a real browser against the real services.

A build says it is working from its first event (not "Build queued…" while it reads files to
detect their language); its ETA, once a fifth of the work is done, is within 2x of the time the
work then took; a citation opens the page of its sentence, highlighted, even when the citation does
not say which page that is, and the viewer's title follows the page shown; a follow-up is resolved
against answered questions, not small talk; the phase row does not move when a phase that did not
run goes away.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from testkit.client import Client
from tests.browser.conftest import Stack
from tests.browser.helpers import new_chat_on, shot, wait_until
from tests.browser.test_experience import KESTREL, ask_in_new_chat, build, logbook, raptor_pdf

pytestmark = pytest.mark.slow

HARBOUR = ("Harbour tide log.\n\nThe quillwort harbour records its highest tide in March, at 6.4 metres.\n\n"
           "In June the quillwort harbour tide reaches 5.1 metres.\n")

RECORD_LABELS = """() => {
    window.__labels = [];
    const box = document.getElementById('build-progress');
    const note = () => {
        const label = document.getElementById('build-label'), eta = document.getElementById('build-eta');
        const bar = document.getElementById('build-bar');
        if (!label) return;
        const now = [performance.now(), label.textContent, eta ? eta.textContent : '',
                     bar ? bar.value / bar.max : 0, box.querySelectorAll('.job-file').length];
        const last = window.__labels[window.__labels.length - 1];
        if (!last || last[1] !== now[1] || last[2] !== now[2]) window.__labels.push(now);
    };
    new MutationObserver(note).observe(box, { subtree: true, childList: true, characterData: true });
    window.__sampler = setInterval(note, 250);
}"""


def start_build(page: Any, stack: Stack, iid: str) -> None:
    page.goto(stack.url + "/#/indexes")
    page.click(f".index-pick[data-id='{iid}']")
    page.wait_for_selector("#build-index")
    page.evaluate(RECORD_LABELS)
    page.click("#build-index")


def test_a_build_reports_progress_from_its_first_event(page: Any, stack: Stack, tmp_path_factory: Any) -> None:
    gw = Client(stack.gateway.url)
    iid = gw.post("/indexes", {"name": "Fresh"}).json["index_id"]  # new: its language is detected first
    pdf = raptor_pdf(tmp_path_factory.mktemp("fresh") / "raptors.pdf").read_bytes()
    assert gw.upload(f"/indexes/{iid}/upload", [("raptors.pdf", pdf), ("harbour.txt", HARBOUR.encode())]).status == 200
    start_build(page, stack, iid)
    page.wait_for_selector("#build-progress[data-state=done]", timeout=300_000)
    labels = page.evaluate("window.__labels")
    texts = [text for _, text, *_ in labels]
    first_working = next(i for i, text in enumerate(texts) if text != "Build queued…")
    # the first thing said after "queued" is that it is starting or reading the files for their language,
    # before the plan exists (no file row yet), with the clock running
    assert re.match(r"^(Starting|Detecting the documents' language): 0% · 0 of 2 files", texts[first_working]), texts[:4]
    assert labels[first_working][4] == 0, "said before any file row: before the plan"
    assert any(text.startswith("Detecting the documents' language") for text in texts), texts[:6]
    assert any("elapsed" in eta for _, text, eta, *_ in labels if not text.startswith(("Reading", "Embedding"))), \
        "the clock runs while the build prepares"
    assert "Build finished. 2 files: 2 indexed" in page.inner_text("#build-label")


def _eta_seconds(text: str) -> float | None:
    found = re.search(r"about (\d+) (s|min) left", text)
    if found is None:
        return None
    return float(found.group(1)) * (60 if found.group(2) == "min" else 1)


def test_the_eta_is_within_2x_of_the_time_taken_once_a_fifth_is_done(page: Any, stack: Stack) -> None:
    gw = Client(stack.gateway.url)
    iid = gw.post("/indexes", {"name": "Timed logbooks"}).json["index_id"]
    assert gw.upload(f"/indexes/{iid}/upload", logbook(10, 300)).status == 200
    start_build(page, stack, iid)
    page.wait_for_selector("#build-progress[data-state=done]", timeout=600_000)
    labels = page.evaluate("window.__labels")
    # the work ends when the embedding is done: the full-text refresh after it is not in the ETA
    end = next(t for t, text, *_ in labels if text.startswith(("Updating the search index", "Build finished")))
    checked = []
    for t, text, eta, fraction, _ in labels:
        left, actual = _eta_seconds(eta), (end - t) / 1000
        if left is None or fraction < 0.2 or actual < 5:
            continue  # below a fifth the rate is still being measured; the last seconds round to nothing
        checked.append((round(fraction, 2), left, round(actual, 1)))
        assert actual / 2 <= left <= actual * 2, f"at {fraction:.0%} the ETA said {left:.0f} s; it took {actual:.1f} s"
    assert len(checked) >= 5, f"too few ETA readings to judge: {checked}"
    print(f"\nETA readings (fraction, said s, took s): {checked[:3]} … {checked[-3:]}")


def test_a_citation_opens_its_sentences_page_highlighted_and_the_title_follows(page: Any, stack: Stack) -> None:
    gw = Client(stack.gateway.url)
    iid = build(gw, "Fens again", [("raptors.pdf", raptor_pdf(stack.data.parent / "raptors2.pdf").read_bytes())])
    ask_in_new_chat(page, stack, iid, "How high does the kestrel hover?")
    page.locator(".msg.assistant").last.locator("button.cite").first.click()
    page.wait_for_selector("#page-viewer[open] img.page-image[data-page='2']")
    assert page.get_attribute("#page-viewer img.page-image", "data-highlight") == "true"
    assert page.inner_text("#viewer-title").endswith("— page 2")
    page.click("#viewer-prev")  # the title names the page shown, not the page it opened on
    page.wait_for_selector("#page-viewer img.page-image[data-page='1']")
    assert page.inner_text("#viewer-title").endswith("— page 1")
    page.keyboard.press("Escape")
    # An answer saved before sentences had their own page: its citation names only the passage's pages
    # (1-2). The viewer looks for the sentence and opens page 2, highlighted, not page 1 without it.
    sid = page.url.split("#/chat/")[1]
    wait_until(lambda: len(gw.get(f"/sessions/{sid}").json["messages"]) == 2)
    cite = gw.get(f"/sessions/{sid}").json["messages"][1]["metadata"]["citations"][0]
    assert KESTREL[:30] in cite["quote"] and cite["page_start"] == 1 and cite["page_end"] == 2
    page.evaluate("(c) => import('/js/viewer.js').then((m) => m.openCitation(c))", {**cite, "location": None})
    page.wait_for_selector("#page-viewer img.page-image[data-page='2'][data-highlight='true']")
    assert page.inner_text("#viewer-title").endswith("— page 2")
    assert page.inner_text("#viewer-page").startswith("Page 2 (cited 1–2)")
    shot(page, "viewer-found-page-2")
    page.keyboard.press("Escape")


def test_a_follow_up_is_resolved_against_answered_questions_only(page: Any, stack: Stack) -> None:
    gw = Client(stack.gateway.url)
    iid = build(gw, "Tides", [("harbour.txt", HARBOUR.encode())])
    page.goto(stack.url + "/")
    page.wait_for_selector("body[data-ready=true]")
    new_chat_on(page, iid)
    for message in ("What is the highest tide in March?", "thanks!", "what about in June?"):
        page.fill("#question", message)
        page.keyboard.press("Enter")
        page.wait_for_function("(n) => document.querySelectorAll('.msg.assistant[data-state=complete]').length >= n",
                               arg=["What is the highest tide in March?", "thanks!", "what about in June?"]
                               .index(message) + 1, timeout=120_000)
    sid = page.url.split("#/chat/")[1]
    wait_until(lambda: len(gw.get(f"/sessions/{sid}").json["messages"]) == 6)
    last = gw.get(f"/sessions/{sid}").json["messages"][-1]["metadata"]
    done = next(e["data"] for e in last["events"] if e["type"] == "complete")
    standalone = (done.get("standalone_query") or "").lower()
    assert "tide" in standalone and "june" in standalone and "thanks" not in standalone, standalone
    assert "5.1 metres" in page.locator(".msg.assistant").last.locator(".answer").inner_text()


def test_the_phase_row_does_not_move_when_a_phase_that_did_not_run_goes(page: Any, stack: Stack) -> None:
    gw = Client(stack.gateway.url)
    iid = next((i["id"] for i in gw.get("/indexes").json["indexes"] if i["name"] == "Tides"), None) or \
        build(gw, "Tides", [("harbour.txt", HARBOUR.encode())])
    page.goto(stack.url + "/")
    page.wait_for_selector("body[data-ready=true]")
    new_chat_on(page, iid)
    for message in ("What is the highest tide in March?", "hello"):  # a question, and small talk (no retrieval)
        page.evaluate("""() => {
            window.__writing = null;
            new MutationObserver(() => {
                const card = [...document.querySelectorAll('.msg.assistant')].pop();
                const chip = card?.querySelector('.phase[data-phase=writing]');
                if (chip && card.dataset.state === 'streaming' && !window.__writing) {  // the row as it streams
                    const r = chip.getBoundingClientRect(), row = chip.parentElement.getBoundingClientRect();
                    window.__writing = [r.x - row.x, r.y - row.y];
                }
            }).observe(document.getElementById('thread'), { subtree: true, attributes: true, childList: true });
        }""")
        page.fill("#question", message)
        page.keyboard.press("Enter")
        page.wait_for_function("(m) => { const a = [...document.querySelectorAll('.msg.assistant')].pop();"
                               " return a && a.dataset.state === 'complete' && window.__writing; }", arg=message,
                               timeout=120_000)
        during = page.evaluate("window.__writing")
        after = page.evaluate("""() => { const chip = [...document.querySelectorAll('.msg.assistant')].pop()
            .querySelector('.phase[data-phase=writing]');
            const r = chip.getBoundingClientRect(), row = chip.parentElement.getBoundingClientRect();
            return [r.x - row.x, r.y - row.y]; }""")
        assert during == after, f"{message!r}: the Writing chip moved from {during} to {after}"
    assert not page.locator(".msg.assistant").last.locator(".phase[data-phase=reranking]").is_visible()
    shot(page, "phase-row-settled")
