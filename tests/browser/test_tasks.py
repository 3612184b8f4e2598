"""A comparison and the evidence inspector in a real headless Chromium, against the real three services.

The index is created and built through the gateway's HTTP API (the upload and
build UI is covered by test_web_app); everything after that is done the way a
user does it: pick the index, choose "Compare", ask, read the cited table,
open the inspector; then ask a question and read its per-leg candidates.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from tests.browser.conftest import ARTIFACTS, DESKTOP, Stack
from tests.browser.helpers import new_chat_on
from tests.integration.test_tasks import DOCS

pytestmark = pytest.mark.slow


@pytest.fixture()
def page(browser: Any, stack: Stack, request: pytest.FixtureRequest) -> Any:
    ctx = browser.new_context(viewport=DESKTOP, bypass_csp=True, reduced_motion="reduce")
    pg = ctx.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    pg.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    pg.errors = errors
    yield pg
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed:
        pg.screenshot(path=str(ARTIFACTS / f"FAILED-{request.node.name}.png"))
    ctx.close()


def built_index(stack: Stack) -> str:
    gw = stack.gateway.client
    iid = gw.post("/indexes", {"name": "Leases", "description": "two leases and an NDA"}).json["index_id"]
    assert gw.upload(f"/indexes/{iid}/upload", [(n, t.encode()) for n, t in DOCS.items()]).status == 200
    started = gw.post(f"/indexes/{iid}/build")
    assert started.status == 202, started.body
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        job = gw.get(f"/indexes/{iid}/jobs/{started.json['job_id']}").json
        if job["state"] in ("done", "failed", "cancelled"):
            assert job["state"] == "done", job
            return iid
        time.sleep(0.3)
    raise AssertionError("the build did not finish")


def test_compare_then_open_the_inspector(page: Any, stack: Stack) -> None:
    iid = built_index(stack)
    page.goto(stack.url + "/#/chat")
    page.wait_for_selector("body[data-ready=true]")
    new_chat_on(page, iid)

    page.select_option("#task-picker", "compare")
    page.fill("#question", "lease 2023 and lease 2024")
    # Every table the answer card shows, in order: the comparison streams a column per document.
    page.evaluate("""() => { window.tableColumns = []; new MutationObserver(records => {
        for (const r of records) for (const n of r.addedNodes) {
          if (n.nodeType !== 1) continue;
          for (const t of n.matches("table") ? [n] : n.querySelectorAll("table"))
            window.tableColumns.push(t.querySelectorAll("th").length);
        } }).observe(document.body, { childList: true, subtree: true }); }""")
    page.keyboard.press("Enter")
    page.wait_for_selector(".msg.assistant[data-state=complete]", timeout=120_000)
    # the index picker drawn once (opening the session while the list loaded used to draw it twice)
    assert page.locator("#index-picker > span", has_text="Search in:").count() == 1
    listed = stack.gateway.client.get("/indexes").json["indexes"]
    assert page.locator("#index-picker .chip-check").count() == len(listed)
    columns = page.evaluate("window.tableColumns")
    assert columns[:2] == [2, 3], columns  # lease-2023 alone first, then both (later tables: the inspector)
    answer = page.locator(".msg.assistant").last
    headers = answer.locator(".answer table th").all_inner_texts()
    assert headers == ["Dimension", "lease-2023.md", "lease-2024.md"], headers
    rows = answer.locator(".answer table tbody tr")
    assert rows.count() == 6
    assert rows.nth(2).locator("td").first.inner_text() == "Key numbers"
    assert "$4,900" in rows.nth(2).inner_text()
    assert answer.locator(".answer table button.cite").count() >= 6
    assert answer.locator(".badge").get_attribute("data-source") == "extractive"

    # the inspector: collapsed until opened, then the names' resolution and every cell's check
    inspector = answer.locator("details.inspector")
    assert inspector.get_attribute("data-kind") == "compare"
    assert not inspector.locator(".inspector-body").is_visible()
    inspector.locator("summary").click()
    body = inspector.locator(".inspector-body")
    assert body.is_visible()
    resolved = body.locator("table").first.inner_text()
    assert "lease-2023.md" in resolved and "unique" in resolved
    checks = body.locator("table").nth(1).locator("tbody tr")
    assert checks.count() == 12  # 6 dimensions x 2 documents
    texts = checks.all_inner_texts()
    assert any("\tvalid" in t for t in texts) and not any("invalid" in t for t in texts), texts
    # below the answer, one column; beside it only when asked for, in the side panel
    box, panel = answer.bounding_box(), inspector.bounding_box()
    text_box = answer.locator(".answer").bounding_box()
    assert abs(panel["x"] - text_box["x"]) < 1 and panel["y"] > text_box["y"] and panel["width"] >= text_box["width"] - 1
    assert box["width"] > 600
    inspector.locator(".insp-beside").click()
    side = page.locator("#side-panel")
    assert side.is_visible() and side.locator(".insp-table").count() == body.locator(".insp-table").count()
    assert side.bounding_box()["x"] >= answer.bounding_box()["x"] + answer.bounding_box()["width"] - 1
    page.screenshot(path=str(ARTIFACTS / "compare-inspector-desktop.png"))
    page.set_viewport_size({"width": 390, "height": 844})
    page.wait_for_timeout(150)
    page.screenshot(path=str(ARTIFACTS / "compare-inspector-phone.png"))
    page.set_viewport_size(DESKTOP)
    page.keyboard.press("Escape")
    assert not side.is_visible()
    assert page.evaluate("document.activeElement.classList.contains('insp-beside')")

    # a question: its inspector lists each retrieval leg's ranked candidates and the citation check
    page.select_option("#task-picker", "qa")
    page.fill("#question", "In the NDA, how long does the agreement remain in effect?")
    page.keyboard.press("Enter")
    page.wait_for_function("document.querySelectorAll('.msg.assistant[data-state=complete]').length === 2",
                           timeout=120_000)
    qa = page.locator(".msg.assistant").last
    qa.locator("details.inspector summary").click()
    panel_text = qa.locator(".inspector-body").inner_text()
    assert "Restricted to 07_nda.txt" in panel_text
    assert qa.locator(".insp-leg[data-leg=vector] tbody tr").count() >= 1
    assert qa.locator(".insp-leg[data-leg=fts] tbody tr").first.locator("td").first.inner_text() == "1"
    assert "Final: valid" in panel_text

    # reloaded from history, both answers still carry their inspector (it is saved with the turn's steps);
    # the RAG API saves turns in the background, so reload until both are there
    for _ in range(40):
        page.reload()
        page.wait_for_selector("body[data-ready=true]")
        if page.locator(".msg.assistant").count() == 2:
            break
        page.wait_for_timeout(500)
    kinds = [d.get_attribute("data-kind") for d in page.locator(".msg.assistant details.inspector").all()]
    assert kinds == ["compare", "qa"], kinds
    assert not page.errors, page.errors
