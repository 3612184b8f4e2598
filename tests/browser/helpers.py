"""Helpers of the browser tests: screenshots, waiting, and recorders that run in the page."""

from __future__ import annotations

import time
from typing import Any

from tests.browser.conftest import ARTIFACTS

BLANK = "   \n\n   \n"  # a text file with no text: its build fails with a reason


def wait_until(check: Any, timeout_s: float = 15.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.2)


def in_order(seen: list[str], expected: list[str]) -> bool:
    """`expected` is a subsequence of `seen`."""
    it = iter(seen)
    return all(state in it for state in expected)


def watch_file_states(page: Any) -> None:
    """Record every state each build row takes (attribute changes, not snapshots) in window.__fileStates."""
    page.evaluate("""() => {
        window.__fileStates = {};
        const note = (li, state) => {
            const list = (window.__fileStates[li.querySelector('.fname').textContent] ||= []);
            if (list[list.length - 1] !== state) list.push(state);
        };
        // Several events can land in one batch of records: each record's old value, then the row's current state.
        new MutationObserver((records) => {
            const touched = new Set();
            for (const r of records) {
                if (!r.target.classList?.contains('job-file')) continue;
                note(r.target, r.oldValue);
                touched.add(r.target);
            }
            for (const li of touched) note(li, li.dataset.state);
        }).observe(document.getElementById('build-progress'), { subtree: true, attributes: true,
                                                                attributeOldValue: true, attributeFilter: ['data-state'] });
    }""")


def phase_states(page: Any) -> list[list[str]]:
    return page.locator(".msg.assistant").last.locator(".phase").evaluate_all(
        "ns => ns.map(n => [n.dataset.phase, n.dataset.state])")


def shot(page: Any, name: str) -> None:
    page.wait_for_timeout(150)  # let a viewport change settle
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=False)


def new_chat_on(page: Any, index_id: str) -> None:
    """Start a new conversation with one index ticked (the picker fills in asynchronously)."""
    page.click("#new-chat")
    page.wait_for_selector(f"#index-picker input[value='{index_id}']")
    page.check(f"#index-picker input[value='{index_id}']")
