"""Everyday use in a real browser: rating answers, removing one document, the first thing people type, exports.

The real three services (extractive answers) and Debian's Chromium. Each test does what a person
does in the web app and checks the outcome through the gateway, as a second reader would: a
rating found in the feedback export, a removed document never cited again, a nameless question
answered with a cited summary, an exported conversation whose page links open.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from testkit.client import Client
from testkit.docs import PDF_PAGE_WORDS, make_pdf
from testkit.scripted_llm import ScriptedLLM
from tests.browser.conftest import PHONE, Stack, started_stack
from tests.browser.helpers import new_chat_on, shot, wait_until

pytestmark = pytest.mark.slow

HARBOUR = "Harbour tide log.\n\nThe quillwort harbour records its highest tide in March, at 6.4 metres.\n"
TIDE_QUESTION = "What is the highest tide in March?"
LEAVE = ("# Leave policy\n\nThis policy explains how employees take paid leave at Zephyr Works.\n\n"
         "## Annual leave\n\nEmployees accrue 25 days of annual leave per year.\n")


def grounded_reply(messages: list[dict[str, Any]]) -> str:
    """What the scripted model writes: the tide sentence, cited with the block the prompt labels harbour.txt."""
    prompt = messages[-1]["content"]
    found = re.search(r"\[(\d+)\][^\n]*harbour\.txt", prompt)
    n = found.group(1) if found else "1"
    return f"The quillwort harbour records its highest tide in March, at 6.4 metres [{n}]."


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """The conftest's stack, plus a scripted OpenAI-compatible model (testkit/scripted_llm.py) that
    Settings → "Model that writes answers" → openai reaches: a model answer, checked by the real
    validator, is what carries `confidence`. The server default stays extractive."""
    with ScriptedLLM(grounded_reply) as llm, started_stack(tmp_path_factory, "everyday", **llm.rag_env()) as up:
        yield up


def build_index(stack: Stack, name: str, files: list[tuple[str, bytes]]) -> str:
    gw = Client(stack.gateway.url)
    iid = gw.post("/indexes", {"name": name}).json["index_id"]
    assert gw.upload(f"/indexes/{iid}/upload", files).status == 200
    job_id = gw.post(f"/indexes/{iid}/build").json["job_id"]
    wait_until(lambda: gw.get(f"/indexes/{iid}/jobs/{job_id}").json["state"] == "done", 240)
    return iid


@pytest.fixture(scope="module")
def library(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    pdf = make_pdf(tmp_path_factory.mktemp("docs") / "guide.pdf").read_bytes()
    return {"mixed": build_index(stack, "Field notes", [("guide.pdf", pdf), ("harbour.txt", HARBOUR.encode())]),
            "single": build_index(stack, "Policy", [("leave.md", LEAVE.encode())])}


def ask(page: Any, question: str) -> Any:
    page.fill("#question", question)
    page.click("#send")
    answer = page.locator(".msg.assistant").last
    page.wait_for_selector(".msg.assistant:last-child[data-state=complete]", timeout=120_000)
    return answer


def open_app(page: Any, stack: Stack) -> None:
    page.goto(stack.url + "/")
    page.wait_for_selector("body[data-ready=true]")


def test_a_rating_given_and_changed_is_found_in_the_export(page: Any, stack: Stack, library: dict[str, str]) -> None:
    open_app(page, stack)
    new_chat_on(page, library["mixed"])
    answer = ask(page, TIDE_QUESTION)
    up, down = answer.locator(".thumb[data-rating=up]"), answer.locator(".thumb[data-rating=down]")
    up.click()
    wait_until(lambda: up.get_attribute("aria-pressed") == "true")
    assert answer.locator(".feedback-status").inner_text().startswith("Thanks")
    down.click()  # changed mind: the other thumb, with a comment
    wait_until(lambda: down.get_attribute("aria-pressed") == "true" and up.get_attribute("aria-pressed") == "false")
    answer.locator(".feedback-comment").fill("It should also give the date of the tide")
    answer.locator(".feedback-form button[type=submit]").click()
    wait_until(lambda: "comment saved" in answer.locator(".feedback-status").inner_text())
    shot(page, "feedback-rated")
    # a reload shows the rating from the gateway
    page.reload()
    page.wait_for_selector(".msg.assistant .thumb[data-rating=down][aria-pressed=true]")
    # the export has one row for this answer: the changed rating, its comment as what is expected
    rows = [json.loads(line) for line in Client(stack.gateway.url).get("/feedback?format=jsonl").body.decode().splitlines()]
    mine = [r for r in rows if r["query"] == TIDE_QUESTION]
    assert len(mine) == 1 and mine[0]["rating"] == "down"
    assert mine[0]["expected"] == ["It should also give the date of the tide"] and mine[0]["cited_chunks"]
    assert not page.errors, page.errors


def test_a_document_removed_in_the_web_app_is_never_cited_again(page: Any, stack: Stack,
                                                                  library: dict[str, str], tmp_path: Path) -> None:
    iid = build_index(stack, "Removable", [("guide.pdf", make_pdf(tmp_path / "g.pdf").read_bytes()),
                                           ("harbour.txt", HARBOUR.encode())])
    open_app(page, stack)
    new_chat_on(page, iid)
    before = ask(page, TIDE_QUESTION)
    assert "harbour.txt" in before.locator(".sources").text_content()
    page.goto(stack.url + "/#/indexes")
    page.click(f".index-pick[data-id='{iid}']")
    row = page.locator("#documents .doc[data-name='harbour.txt']")
    row.locator(".remove-doc").click()
    page.wait_for_selector("#confirm-dialog[open]")
    assert "harbour.txt" in page.inner_text("#confirm-text")
    shot(page, "remove-document-confirm")
    page.click("#confirm-ok")
    page.wait_for_function("!document.querySelector(\"#documents .doc[data-name='harbour.txt']\")")
    assert page.locator("#documents .doc").count() == 1
    assert "1 document" in page.locator(f".index-pick[data-id='{iid}'] .count").inner_text()
    shot(page, "remove-document-done")
    open_app(page, stack)
    new_chat_on(page, iid)
    after = ask(page, TIDE_QUESTION)
    assert "harbour.txt" not in after.text_content() and "6.4 metres" not in after.locator(".answer").inner_text()
    docs = Client(stack.gateway.url).get(f"/indexes/{iid}").json["documents"]
    assert [d["filename"] for d in docs] == ["guide.pdf"]
    assert not page.errors, page.errors


def test_what_is_this_about_over_a_one_document_index_is_a_cited_summary(page: Any, stack: Stack,
                                                                          library: dict[str, str]) -> None:
    open_app(page, stack)
    new_chat_on(page, library["single"])
    answer = ask(page, "What is this about?")
    body = answer.locator(".answer")
    assert "Summary of leave.md" in body.inner_text()
    assert body.locator("button.cite").count() >= 1
    assert "leave.md" in answer.locator(".sources").text_content()
    shot(page, "what-is-this-about")
    assert not page.errors, page.errors


def test_an_exported_conversation_opens_and_its_page_links_resolve(page: Any, stack: Stack,
                                                                    library: dict[str, str], tmp_path: Path) -> None:
    open_app(page, stack)
    new_chat_on(page, library["mixed"])
    ask(page, f"Where is the {PDF_PAGE_WORDS[1]} described?")
    ask(page, TIDE_QUESTION)
    with page.expect_download() as download:
        page.click("#export-chat")
    saved = tmp_path / "conversation.md"
    download.value.save_as(saved)
    text = saved.read_text()
    assert f"## 1. Where is the {PDF_PAGE_WORDS[1]} described?" in text and f"## 2. {TIDE_QUESTION}" in text
    links = re.findall(r"\[guide\.pdf, p\. (\d+)\]\((http[^)\s]+)\)", text)
    assert links, text
    for number, link in links:
        response = page.goto(link)  # opened in the browser, as a reader of the file would
        assert response.status == 200 and response.headers["content-type"] == "image/png", (number, link)
    shot(page, "export-page-link")
    text_links = re.findall(r"\[harbour\.txt\]\((http[^)\s]+)\)", text)
    assert text_links and "highest tide" in page.goto(text_links[0]).text()


def test_confidence_in_plain_words_beside_the_badge_when_verify_is_on(page: Any, stack: Stack,
                                                                      library: dict[str, str]) -> None:
    open_app(page, stack)
    page.goto(stack.url + "/#/settings")
    page.check("#settings-form input[name=verify]")
    page.select_option("#settings-form select[name=backend]", "openai")
    open_app(page, stack)
    new_chat_on(page, library["mixed"])
    answer = ask(page, TIDE_QUESTION)
    assert answer.locator(".meta .badge").get_attribute("data-source") in ("llm", "llm_repaired")
    label = answer.locator(".meta .confidence")
    assert label.inner_text() in ("Well supported", "Partly supported", "Weakly supported")
    assert "%" in label.get_attribute("title")
    badge, conf = answer.locator(".meta .badge").bounding_box(), label.bounding_box()
    assert abs(badge["y"] - conf["y"]) < badge["height"] and conf["x"] > badge["x"]  # beside it, on its line
    shot(page, "confidence")
    page.goto(stack.url + "/#/settings")
    page.uncheck("#settings-form input[name=verify]")
    open_app(page, stack)
    new_chat_on(page, library["mixed"])
    assert ask(page, TIDE_QUESTION).locator(".meta .confidence").count() == 0


def test_filters_pick_documents_and_file_types_for_a_question(page: Any, stack: Stack, library: dict[str, str]) -> None:
    sent: list[dict[str, Any]] = []
    page.on("request", lambda r: sent.append(json.loads(r.post_data or "{}")) if r.url.endswith("/chat/stream") else None)
    open_app(page, stack)
    new_chat_on(page, library["mixed"])
    page.click("#filters-toggle")
    panel = page.locator("#filters .filters-panel")
    panel.locator(".filter-docs").wait_for()
    assert panel.locator(".filter-docs .filter-option").all_inner_texts() == ["guide.pdf", "harbour.txt"]
    assert panel.locator(".filter-types .filter-option").all_inner_texts() == ["PDF", "TXT"]
    panel.locator(".filter-docs label", has_text="harbour.txt").locator("input").check()
    assert page.inner_text("#filters-toggle") == "Filters · 1"
    shot(page, "filters-panel")
    panel.get_by_role("button", name="Done").click()
    # the one document in scope: "What is this about?" is its summary
    answer = ask(page, "What is this about?")
    assert "Summary of harbour.txt" in answer.locator(".answer").inner_text()
    harbour = [d for d in Client(stack.gateway.url).get(f"/indexes/{library['mixed']}").json["documents"]
               if d["filename"] == "harbour.txt"][0]
    assert sent[-1]["filters"] == {"document_id": [harbour["sha256"]]}
    # only PDFs: the tide (in the text file) is not found
    page.click("#filters-toggle")
    panel.get_by_role("button", name="Clear").click()
    panel.locator(".filter-types label", has_text="PDF").locator("input").check()
    page.click("#filters-toggle")  # closes the panel
    answer = ask(page, TIDE_QUESTION)
    assert sent[-1]["filters"] == {"file_type": ["pdf"]}
    assert "harbour.txt" not in answer.text_content()
    # at phone width the panel stays on screen
    page.set_viewport_size(PHONE)
    page.click("#filters-toggle")
    panel.locator(".filter-docs").wait_for()
    box = panel.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"] and box["y"] >= 0, box
    shot(page, "filters-panel-phone")
    assert not page.errors, page.errors
