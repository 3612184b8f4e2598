"""The "Check a text" view: paste a draft, see each sentence marked, click through to the cited page.

Real services and a real PDF (the shared Northwind leave policy): the index is built through the
gateway, the view is reached from the sidebar, the chat's index is offered first, and the page
viewer opens on the page of the evidence. The same at phone width, without sideways scrolling.
"""

from __future__ import annotations

from typing import Any

import pytest

from testkit import EVAL_DATA
from testkit.client import Client
from tests.browser.conftest import PHONE, Stack
from tests.browser.helpers import new_chat_on, shot
from tests.browser.test_experience import build

POLICY = EVAL_DATA / "localgpt" / "corpora" / "northwind_leave_policy.pdf"
pytestmark = pytest.mark.skipif(not POLICY.is_file(), reason=f"shared eval data not at {EVAL_DATA}")

SICK = "Sick leave is paid at 100 percent of base salary for the first 12 weeks of a single absence."
CONTRACTORS = "Contractors engaged through an agency are covered by this policy."
CANTEEN = "The office canteen serves vegan lunches on Fridays."
DRAFT = f"{SICK} {CONTRACTORS}\n\n{CANTEEN}"


@pytest.fixture(scope="module")
def policy_index(stack: Stack) -> str:
    return build(Client(stack.gateway.url), "Leave policy", [(POLICY.name, POLICY.read_bytes())])


def _check(page: Any, stack: Stack, iid: str) -> None:
    page.goto(stack.url + "/")
    page.wait_for_selector("body[data-ready='true']")
    new_chat_on(page, iid)  # the chat searches the policy: the view offers "the chat's indexes" first
    page.click("#nav-verify")
    page.wait_for_selector("#verify-index option[value='__chat__']", state="attached")
    assert page.input_value("#verify-index") == "__chat__"
    assert "Leave policy" in page.inner_text("#verify-index option[value='__chat__']")
    assert page.inner_text("#view-title") == "Check a text"
    page.fill("#verify-text", DRAFT)
    page.click("#verify-submit")
    page.wait_for_selector("#verify-summary", timeout=120_000)


def test_a_pasted_draft_is_marked_sentence_by_sentence_and_opens_the_page(page: Any, stack: Stack,
                                                                          policy_index: str) -> None:
    _check(page, stack, policy_index)
    sentences = page.locator(".vsent")
    assert sentences.count() == 3
    verdicts = sentences.evaluate_all("ns => ns.map(n => n.dataset.verdict)")
    texts = page.locator(".vsent .vtext").all_inner_texts()
    assert texts == [SICK, CONTRACTORS, CANTEEN]
    assert verdicts == ["supported", "contradicted", "unsupported"], verdicts
    assert page.get_attribute("#verify-summary", "data-supported") == "false"
    assert "1 supported, 1 contradicted, 1 not in the documents" in page.inner_text("#verify-summary")
    assert [page.inner_text(f".vsent:nth-child({i}) .vverdict") for i in (1, 2, 3)] == \
        ["Supported", "Contradicted", "Not in the documents"]
    assert "opposite" in page.inner_text(".vsent:nth-child(2) .vfindings")  # the finding in plain words
    assert "not covered" in page.inner_text(".vsent:nth-child(2) .vquote")
    shot(page, "verify-desktop")

    evidence = page.locator(".vsent:nth-child(1) .vopen").first
    assert f"{POLICY.name}, page 2" in evidence.inner_text()
    evidence.click()
    page.wait_for_selector("#page-viewer[open] img.page-image")
    page.wait_for_function("document.querySelector('#page-viewer img.page-image').naturalWidth > 300")
    assert "— page 2" in page.inner_text("#viewer-title")
    assert "12 weeks" in page.inner_text("#viewer-body .quote")
    shot(page, "verify-page")
    page.keyboard.press("Escape")
    page.wait_for_selector("#page-viewer:not([open])", state="attached")
    assert not page.errors, page.errors


def test_the_view_fits_a_phone(page: Any, stack: Stack, policy_index: str) -> None:
    page.set_viewport_size(PHONE)
    page.goto(stack.url + "/")
    page.wait_for_selector("body[data-ready='true']")
    page.click("#menu-toggle")
    page.click("#nav-verify")  # reachable from the drawer, which closes
    page.wait_for_selector(f"#verify-index option[value='{policy_index}']", state="attached")
    page.select_option("#verify-index", policy_index)
    page.fill("#verify-text", DRAFT)
    page.click("#verify-submit")
    page.wait_for_selector("#verify-summary", timeout=120_000)
    assert page.locator(".vsent").count() == 3
    width = page.evaluate("() => [document.scrollingElement.scrollWidth, window.innerWidth]")
    assert width[0] <= width[1], width
    overflow = page.evaluate("() => document.getElementById('view-verify').scrollWidth - document.getElementById('view-verify').clientWidth")
    assert overflow <= 0, overflow
    text_box = page.locator("#verify-text").bounding_box()
    assert text_box and text_box["width"] >= 0.8 * PHONE["width"]
    submit = page.locator("#verify-submit").bounding_box()
    assert submit and submit["x"] + submit["width"] <= PHONE["width"]
    shot(page, "verify-phone")
    page.locator(".vsent").last.scroll_into_view_if_needed()
    shot(page, "verify-phone-results")
    assert not page.errors, page.errors
