"""What a new user stumbled on in the screenshots of issue 24 (390x844 and 1280x800), in real Chromium.

At phone width the question box had a third of the width beside the task menu, and picking an index
opened its detail below the fold (the tap seemed to do nothing). A refusal listed "Sources (2)" under
"Not in the documents". The build bar was a short stub with the label wrapped under it.
"""

from __future__ import annotations

from typing import Any

import pytest

from testkit.client import Client
from tests.browser.conftest import DESKTOP, PHONE, Stack
from tests.browser.helpers import new_chat_on
from tests.browser.test_experience import build

pytestmark = pytest.mark.slow

TIDES = b"Harbour log.\n\nThe highest tide in March is 6.4 metres.\n"


def box(page: Any, selector: str) -> dict[str, float]:
    return page.evaluate("""(s) => { const r = document.querySelector(s).getBoundingClientRect();
        return { x: r.x, y: r.y, width: r.width, bottom: r.bottom, vw: innerWidth, vh: innerHeight }; }""", selector)


def test_at_phone_width_the_question_box_is_wide_and_an_index_opens_in_view(page: Any, stack: Stack) -> None:
    gw = Client(stack.gateway.url)
    first = build(gw, "Harbour", [("harbour.txt", TIDES)])
    for n in range(6):  # a list long enough to push the detail below the form and the list
        gw.post("/indexes", {"name": f"Shelf {n}"})
    page.set_viewport_size(PHONE)
    page.goto(stack.url + "/#/chat")
    page.wait_for_selector("body[data-ready=true]")
    question, send = box(page, "#question"), box(page, "#send")
    assert question["width"] >= 0.8 * question["vw"], question  # was ~170 of 390 px beside the task menu
    assert send["x"] + send["width"] <= send["vw"] and send["bottom"] <= send["vh"], send  # Send still on screen

    page.goto(stack.url + "/#/indexes")
    page.wait_for_selector(f".index-pick[data-id='{first}']")
    page.click(f".index-pick[data-id='{first}']")
    page.wait_for_selector("#index-detail")
    page.wait_for_timeout(300)
    button = box(page, "#build-index")
    assert 0 <= button["y"] and button["bottom"] <= button["vh"], f"the picked index's detail is off screen: {button}"

    page.set_viewport_size(DESKTOP)
    page.click("#build-index")
    page.wait_for_selector("#build-progress[data-state=done]", timeout=120_000)
    bar, progress = box(page, "#build-bar"), box(page, "#build-progress")
    assert bar["width"] >= 0.9 * progress["width"], (bar, progress)  # a bar, not a 140 px stub
    assert page.inner_text("#build-eta").startswith("took ")
    assert not page.errors, page.errors


def test_a_refusal_calls_its_passages_closest_not_sources(page: Any, stack: Stack) -> None:
    gw = Client(stack.gateway.url)
    iid = next((i["id"] for i in gw.get("/indexes").json["indexes"] if i["name"] == "Harbour"), None) or \
        build(gw, "Harbour", [("harbour.txt", TIDES)])
    page.goto(stack.url + "/")
    page.wait_for_selector("body[data-ready=true]")
    new_chat_on(page, iid)
    page.fill("#question", "Which submarine cable connects Iceland with Greenland?")
    page.keyboard.press("Enter")
    page.wait_for_selector(".msg.assistant[data-state=complete]", timeout=120_000)
    assert page.get_attribute(".msg.assistant .badge", "data-source") == "refusal"
    summary = page.inner_text(".msg.assistant details.sources summary")
    assert summary.startswith("Closest passages, not the answer ("), summary
    assert not page.errors, page.errors
