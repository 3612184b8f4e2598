"""The web app with accounts on, in real Chromium: the login page, the header, a streamed answer with a grant.

This module's own stack (users made with the CLI before the services start) replaces the shared
one, so the `browser` and `page` fixtures of conftest.py drive it. The RAG API answers extractively
here: what is tested is who may see and ask what, not the model.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from testkit.accounts import LoginClient, create_user
from testkit.client import Client
from testkit.processes import GatewayProcess, RagApiProcess, free_port
from testkit.stack import wait_build
from tests.browser.conftest import PHONE, FrontendProcess, Stack, _require_browser, running
from tests.browser.helpers import shot

PASSWORDS = {"ann": "ann-password-1", "bob": "bob-password-22"}
SECRET = "The archive room code is eleven twenty."


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    _require_browser()
    data = tmp_path_factory.mktemp("browser-accounts") / "data"
    create_user(data, "ann", "admin", PASSWORDS["ann"])
    create_user(data, "bob", "viewer", PASSWORDS["bob"])
    gw_port, rag_port, web_port = free_port(), free_port(), free_port()
    origins = f"http://127.0.0.1:{web_port}"
    gateway = GatewayProcess(data, port=gw_port, rag_url=f"http://127.0.0.1:{rag_port}", DOCENT_CORS_ORIGINS=origins)
    rag = RagApiProcess(data, rag_port, gateway_url=f"http://127.0.0.1:{gw_port}", DOCENT_CORS_ORIGINS=origins)
    web = FrontendProcess(data, web_port, gateway.url, rag.url)
    with running(Stack(data, gateway, rag, web)) as up:
        ann = LoginClient(gateway.url)
        assert ann.login("ann", PASSWORDS["ann"]).status == 200
        iid = ann.post("/indexes", {"name": "Ann archive"}).json["index_id"]
        assert ann.upload(f"/indexes/{iid}/upload", [("archive.md", f"# Archive\n\n{SECRET}\n".encode())]).status == 200
        assert wait_build(ann, iid)["state"] == "done"
        yield up


def _sign_in_with_the_keyboard(page: Any, name: str) -> None:
    page.wait_for_selector("#login-username:focus")  # the page opens with the cursor in the name field
    page.keyboard.type(name)
    page.keyboard.press("Tab")
    page.keyboard.type(PASSWORDS[name])
    page.keyboard.press("Enter")
    page.wait_for_selector("body[data-ready=true]")


def test_login_page_keyboard_header_and_a_streamed_answer(page: Any, stack: Stack) -> None:
    page.goto(stack.url)
    page.wait_for_selector("#login")
    assert page.is_hidden("#app")
    page.fill("#login-username", "ann")
    page.fill("#login-password", "not the password")
    page.click("#login-submit")
    page.wait_for_selector("#login-error:has-text('wrong user name or password')")
    page.fill("#login-username", "")
    page.fill("#login-password", "")
    page.reload()
    _sign_in_with_the_keyboard(page, "ann")
    assert page.inner_text("#account-name") == "ann"
    assert page.is_visible("#sign-out")
    shot(page, "accounts-header-desktop")
    page.wait_for_selector("#index-picker input[type=checkbox]")
    page.check("#index-picker input[type=checkbox]")
    page.fill("#question", "What is the archive room code?")
    page.keyboard.press("Enter")
    page.wait_for_selector(".msg.assistant[data-state=complete]", timeout=120_000)
    assert "eleven twenty" in page.inner_text(".msg.assistant").lower()
    # a reload keeps the login (HttpOnly cookie); the page never sees the cookie itself
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    assert page.inner_text("#account-name") == "ann"
    assert "docent_session" not in page.evaluate("document.cookie")
    page.click("#sign-out")
    page.wait_for_selector("#login")
    # the one refused sign-in is the only failed request
    assert all("401" in e for e in page.errors) and any("/auth/login" in e for e in page.errors), page.errors


def test_a_viewer_sees_only_what_is_shared_and_the_login_fits_a_phone(page: Any, stack: Stack) -> None:
    page.set_viewport_size(PHONE)
    page.goto(stack.url)
    page.wait_for_selector("#login")
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    shot(page, "accounts-login-phone")
    _sign_in_with_the_keyboard(page, "bob")
    assert page.inner_text("#account-name") == "bob"
    page.goto(stack.url + "/#/indexes")
    page.wait_for_selector("body[data-ready=true]")
    page.wait_for_timeout(500)
    assert "Ann archive" not in page.inner_text("#view-indexes")
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


def test_sharing_from_the_index_manager_and_revoking_it(browser: Any, stack: Stack) -> None:
    owner = browser.new_context(viewport={"width": 1280, "height": 800}, bypass_csp=True, reduced_motion="reduce")
    other = browser.new_context(viewport=PHONE, bypass_csp=True, reduced_motion="reduce")
    try:
        ann, bob = owner.new_page(), other.new_page()
        ann.goto(stack.url)
        _sign_in_with_the_keyboard(ann, "ann")
        ann.goto(stack.url + "/#/indexes")
        ann.click(".index-pick:has-text('Ann archive')")
        ann.wait_for_selector("#share-list li")
        ann.fill("#share-user", "bob")
        ann.select_option("#share-access", "read")
        ann.keyboard.press("Enter")
        ann.wait_for_selector("#share-list li[data-grantee=bob]")
        shot(ann, "accounts-sharing-desktop")
        bob.goto(stack.url)
        _sign_in_with_the_keyboard(bob, "bob")
        bob.goto(stack.url + "/#/indexes")
        bob.wait_for_selector(".index-pick:has-text('Ann archive')")
        bob.goto(stack.url + "/#/chat")
        bob.wait_for_selector("#index-picker input[type=checkbox]")
        bob.check("#index-picker input[type=checkbox]")
        bob.fill("#question", "What is the archive room code?")
        bob.keyboard.press("Enter")
        bob.wait_for_selector(".msg.assistant[data-state=complete]", timeout=120_000)
        assert "eleven twenty" in bob.inner_text(".msg.assistant").lower()
        ann.click("#share-list li[data-grantee=bob] button")
        ann.wait_for_selector("#share-list li[data-grantee=bob]", state="detached")
        bob.fill("#question", "And the archive room code again?")
        bob.keyboard.press("Enter")
        bob.wait_for_selector(".msg.assistant[data-state=error]", timeout=60_000)
        assert "not yours and not shared" in bob.inner_text(".msg.assistant[data-state=error]")
        bob.goto(stack.url + "/#/indexes")
        bob.reload()
        bob.wait_for_selector("body[data-ready=true]")
        bob.wait_for_timeout(500)
        assert "Ann archive" not in bob.inner_text("#view-indexes")
    finally:
        owner.close()
        other.close()


def test_the_account_page_tokens_users_and_audit(page: Any, stack: Stack) -> None:
    page.goto(stack.url)
    _sign_in_with_the_keyboard(page, "ann")
    page.click("#nav-account")
    page.wait_for_selector("#user-rows tr[data-user=bob]")
    page.fill("#token-name", "backup script")
    page.keyboard.press("Enter")
    page.wait_for_selector("#token-once code")
    token = page.inner_text("#token-once code")
    assert token.startswith("dpt_")
    assert Client(stack.gateway.url, token).get("/auth/me").json["user"]["username"] == "ann"
    page.wait_for_selector("#token-list li:has-text('backup script')")
    page.fill("#new-user-name", "cleo")
    page.select_option("#new-user-role", "editor")
    page.fill("#new-user-password", "cleo-password-1")
    page.click("#user-form button[type=submit]")
    page.wait_for_selector("#user-rows tr[data-user=cleo]")
    assert page.locator("#audit-rows tr").count() >= 5
    assert "login" in page.inner_text("#audit-rows")
    shot(page, "accounts-admin-desktop")
    page.set_viewport_size(PHONE)
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
    page.click("#token-list li:has-text('backup script') button")
    page.wait_for_selector("#token-list li:has-text('backup script')", state="detached")
    assert Client(stack.gateway.url, token).get("/auth/me").status == 401
