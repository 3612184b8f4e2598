"""The route table keeps localGPT's routes (so its clients keep working) plus Docent's."""

from __future__ import annotations

import pytest

from backend import routes
from common.errors import ApiError

EXPECTED = {
    ("GET", "/health"), ("GET", "/models"), ("GET", "/metrics"),
    ("GET", "/sessions"), ("POST", "/sessions"), ("GET", "/sessions/{session_id}"),
    ("DELETE", "/sessions/{session_id}"), ("POST", "/sessions/{session_id}/rename"),
    ("GET", "/sessions/{session_id}/history"),
    ("POST", "/sessions/{session_id}/messages"), ("POST", "/sessions/{session_id}/messages/save"),
    ("GET", "/sessions/{session_id}/documents"), ("POST", "/sessions/{session_id}/upload"),
    ("POST", "/sessions/{session_id}/index"), ("GET", "/sessions/{session_id}/indexes"),
    ("POST", "/sessions/{session_id}/indexes/{index_id}"), ("DELETE", "/sessions/{session_id}/indexes/{index_id}"),
    ("GET", "/indexes"), ("POST", "/indexes"), ("GET", "/indexes/{index_id}"), ("DELETE", "/indexes/{index_id}"),
    ("POST", "/indexes/{index_id}/upload"), ("POST", "/indexes/{index_id}/build"),
    ("GET", "/indexes/{index_id}/jobs/{job_id}"),
    # Synced folders (issue 21, Documentation/api-gateway.md).
    ("GET", "/indexes/{index_id}/sync"), ("POST", "/indexes/{index_id}/sync"),
    ("POST", "/indexes/{index_id}/sync/folders"), ("DELETE", "/indexes/{index_id}/sync/folders"),
    ("GET", "/documents/{document_id}/pages/{page}.png"), ("GET", "/documents/{document_id}/file"),
    # localGPT's routes added by issue 20: plain LLM chat and the empty-session cleanup
    ("POST", "/chat"), ("POST", "/chat/stream"), ("GET", "/sessions/cleanup"),
    ("GET", "/v1/models"), ("POST", "/v1/chat/completions"),
    # the verifier on any text (issue 41)
    ("POST", "/verify"),
    # Everyday use (issue 43): feedback and its export, one document at a time, a conversation as Markdown
    ("POST", "/messages/{message_id}/feedback"), ("GET", "/feedback"),
    ("DELETE", "/indexes/{index_id}/documents/{document_id}"), ("GET", "/sessions/{session_id}/export"),
}


def test_route_table_is_the_issue_list() -> None:
    assert {(r.method, r.pattern) for r in routes.TABLE} == EXPECTED
    assert [r.pattern for r in routes.TABLE if r.public] == ["/health"]


@pytest.mark.parametrize(("method", "path", "pattern", "params"), [
    ("POST", "/sessions/abc/messages", "/sessions/{session_id}/messages", {"session_id": "abc"}),
    ("POST", "/sessions/abc/messages/save", "/sessions/{session_id}/messages/save", {"session_id": "abc"}),
    ("POST", "/sessions/s1/indexes/i1", "/sessions/{session_id}/indexes/{index_id}",
     {"session_id": "s1", "index_id": "i1"}),
    ("GET", "/documents/d1/pages/12.png", "/documents/{document_id}/pages/{page}.png",
     {"document_id": "d1", "page": "12"}),
    ("HEAD", "/sessions", "/sessions", {}),
])
def test_match(method: str, path: str, pattern: str, params: dict[str, str]) -> None:
    route, found = routes.match(method, path)
    assert route.pattern == pattern and found == params


@pytest.mark.parametrize(("method", "path", "status"), [
    ("GET", "/nope", 404), ("GET", "/sessions/a/b/c", 404), ("GET", "/documents/d/pages/1.jpg", 404),
    ("PUT", "/sessions", 405), ("GET", "/sessions/a/messages", 405), ("DELETE", "/indexes", 405),
])
def test_misses(method: str, path: str, status: int) -> None:
    with pytest.raises(ApiError) as err:
        routes.match(method, path)
    assert err.value.status == status
