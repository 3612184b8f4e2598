"""In real Chromium: an answer carrying `<script>` and `javascript:` links renders inert; uploaded HTML never runs.

The answer is real: a document whose sentence holds the payload is indexed,
and the extractive backend quotes that sentence verbatim, so the payload
travels RAG API -> gateway history -> web app exactly as a hostile
document's text (or a manipulated model's output) would. The services and
the browser come from conftest.py.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from testkit.client import Client
from tests.browser.conftest import DESKTOP, Stack

pytestmark = pytest.mark.slow

PAYLOAD_DOC = ("Velvetfrog manual.\n\n"
               "The velvetfrog alarm code is <script>window.__xss=1;alert(1)</script> "
               "and the velvetfrog manual is at [the manual](javascript:window.__xss=2) "
               "or <a href=\"javascript:window.__xss=3\" onclick=\"window.__xss=4\">here</a> "
               "<img src=x onerror=\"window.__xss=5\">.\n")
QUESTION = "What is the velvetfrog alarm code?"
HTML_DOC = ("<html><head><title>Hostile page</title><script>window.__xss_html=1;alert('html')</script></head>"
            "<body onload=\"window.__xss_html=2\"><h1>Hostile page</h1><p>The heronwood fence is green.</p>"
            "<img src=x onerror=\"window.__xss_html=3\"></body></html>")


def _build(gw: Client) -> tuple[str, str]:
    iid = gw.post("/indexes", {"name": "Velvetfrog"}).json["index_id"]
    up = gw.upload(f"/indexes/{iid}/upload", [("velvetfrog.txt", PAYLOAD_DOC.encode()),
                                              ("hostile.html", HTML_DOC.encode())])
    assert up.status == 200, up.body
    html_id = next(u["document_id"] for u in up.json["uploaded_files"] if u["filename"] == "hostile.html")
    job_id = gw.post(f"/indexes/{iid}/build").json["job_id"]
    deadline = time.monotonic() + 240
    while gw.get(f"/indexes/{iid}/jobs/{job_id}").json["state"] not in ("done", "failed"):
        assert time.monotonic() < deadline, "build did not finish"
        time.sleep(0.3)
    return iid, html_id


def _inert(page: Any, dialogs: list[str]) -> None:
    assert page.evaluate("window.__xss") is None
    assert dialogs == [], dialogs
    assert page.locator("#thread script").count() == 0
    assert page.locator('#thread a[href^="javascript:" i]').count() == 0
    assert page.locator("#thread [onclick], #thread [onerror]").count() == 0


def test_hostile_answer_and_uploaded_html_stay_inert(stack: Stack, browser: Any) -> None:  # noqa: F811
    gw = stack.gateway.client
    iid, html_id = _build(gw)
    direct = stack.rag.client.post("/chat", {"query": QUESTION, "indexes": [iid], "backend": "extractive"})
    assert direct.status == 200 and "<script>" in direct.json["answer"], direct.body  # the payload really arrives
    assert "javascript:" in direct.json["answer"]

    ctx = browser.new_context(viewport=DESKTOP)
    page = ctx.new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    try:
        page.goto(stack.url + "/")
        page.wait_for_selector("body[data-ready=true]")
        page.click("#new-chat")
        page.wait_for_selector(f'#index-picker input[value="{iid}"]')
        page.check(f'#index-picker input[value="{iid}"]')
        page.fill("#question", QUESTION)
        page.keyboard.press("Enter")
        page.wait_for_selector(".msg.assistant[data-state=complete]", timeout=120_000)
        assert "velvetfrog" in page.inner_text(".msg.assistant >> nth=-1").lower()
        _inert(page, dialogs)
        page.reload()  # the same answer rendered again from the gateway's history
        page.wait_for_selector(".msg.assistant", timeout=60_000)
        assert "velvetfrog" in page.inner_text(".msg.assistant >> nth=-1").lower()
        _inert(page, dialogs)

        # The uploaded HTML, opened the way the viewer's "Open the original file" link opens it.
        preview = ctx.new_page()
        preview.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        url = f"{stack.gateway.url}/documents/{html_id}/file"
        from playwright.sync_api import Error as PlaywrightError

        try:
            response = preview.goto(url)
        except PlaywrightError as exc:  # Playwright reports a download as an aborted navigation
            assert "Download is starting" in str(exc), exc
            response = None
        if response is not None:  # rendered: the sandbox must keep its scripts from running
            assert "sandbox" in (response.header_value("content-security-policy") or "")
            assert preview.evaluate("window.__xss_html") is None
        assert dialogs == [], dialogs
        raw = gw.get(f"/documents/{html_id}/file")
        assert raw.headers["content-disposition"].startswith("attachment")
        assert "sandbox" in raw.headers["content-security-policy"]
        assert raw.headers["x-content-type-options"] == "nosniff"
    finally:
        ctx.close()
