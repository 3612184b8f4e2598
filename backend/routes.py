"""The route table: (method, path pattern) -> handler (`common.http.RouteTable` matches; 404/405 come from it)."""

from __future__ import annotations

from backend import handlers_chat as chat
from backend import handlers_admin as admin
from backend import handlers_auth as auth
from backend import handlers_documents as documents
from backend import handlers_feedback as feedback
from backend import handlers_indexes as indexes
from backend import handlers_llm as llm
from backend import handlers_openai as openai
from backend import handlers_sessions as sessions
from backend import handlers_shares as shares
from backend import handlers_sync as sync
from backend import handlers_system as system
from backend import handlers_verify as verify
from backend import turn_save
from common.http import Route, RouteTable

TABLE: tuple[Route, ...] = (
    Route("GET", "/health", system.health, public=True),
    Route("GET", "/models", system.models),
    Route("GET", "/metrics", system.metrics),
    Route("POST", "/chat", llm.chat),  # localGPT's plain LLM chat (no session, no index)
    Route("POST", "/chat/stream", llm.chat_stream),
    Route("GET", "/sessions", sessions.list_sessions),
    Route("POST", "/sessions", sessions.create_session),
    Route("GET", "/sessions/cleanup", sessions.cleanup_sessions),  # before the {session_id} pattern
    Route("GET", "/sessions/{session_id}", sessions.get_session),
    Route("GET", "/sessions/{session_id}/history", sessions.session_history),
    Route("GET", "/sessions/{session_id}/export", sessions.export_session),
    Route("DELETE", "/sessions/{session_id}", sessions.delete_session),
    Route("POST", "/sessions/{session_id}/rename", sessions.rename_session),
    Route("POST", "/sessions/{session_id}/messages", chat.post_message),
    Route("POST", "/sessions/{session_id}/messages/save", turn_save.save_turn),
    Route("GET", "/sessions/{session_id}/documents", sessions.session_documents),
    Route("POST", "/sessions/{session_id}/upload", sessions.upload),
    Route("POST", "/sessions/{session_id}/index", sessions.index_documents),
    Route("GET", "/sessions/{session_id}/indexes", sessions.session_indexes),
    Route("POST", "/sessions/{session_id}/indexes/{index_id}", sessions.link_index),
    Route("DELETE", "/sessions/{session_id}/indexes/{index_id}", sessions.unlink_index),
    Route("GET", "/indexes", indexes.list_indexes),
    Route("POST", "/indexes", indexes.create_index),
    Route("GET", "/indexes/{index_id}", indexes.get_index),
    Route("DELETE", "/indexes/{index_id}", indexes.delete_index),
    Route("POST", "/indexes/{index_id}/upload", indexes.upload),
    Route("DELETE", "/indexes/{index_id}/documents/{document_id}", indexes.delete_document),
    Route("POST", "/indexes/{index_id}/build", indexes.build),
    Route("GET", "/indexes/{index_id}/jobs/{job_id}", indexes.job),
    Route("GET", "/indexes/{index_id}/sync", sync.status),
    Route("POST", "/indexes/{index_id}/sync", sync.trigger),
    Route("POST", "/indexes/{index_id}/sync/folders", sync.bind),
    Route("DELETE", "/indexes/{index_id}/sync/folders", sync.unbind),
    Route("POST", "/messages/{message_id}/feedback", feedback.rate),
    Route("GET", "/feedback", feedback.export),
    Route("GET", "/documents/{document_id}/pages/{page}.png", documents.page_image),
    Route("GET", "/documents/{document_id}/file", documents.original_file),
    Route("POST", "/verify", verify.verify),  # the verifier on any text; indexes checked in the handler
    # The OpenAI-compatible door (model `docent/<index name>`), same bearer token.
    Route("GET", "/v1/models", openai.list_models),
    Route("POST", "/v1/chat/completions", openai.chat_completions),
)

#: Accounts (Documentation/security.md): on every gateway; in single-user mode they say accounts are off.
ACCOUNT_TABLE: tuple[Route, ...] = (
    Route("GET", "/auth/status", auth.status, public=True),
    Route("POST", "/auth/login", auth.login, public=True),
    Route("POST", "/auth/logout", auth.logout, public=True),
    Route("GET", "/auth/me", auth.me),
    Route("POST", "/auth/rag-token", auth.rag_token),
    Route("GET", "/auth/epoch", auth.grant_epoch),
    Route("GET", "/auth/tokens", auth.list_tokens),
    Route("POST", "/auth/tokens", auth.create_token),
    Route("DELETE", "/auth/tokens/{token_id}", auth.revoke_token),
    Route("GET", "/indexes/{index_id}/shares", shares.list_shares),
    Route("POST", "/indexes/{index_id}/shares", shares.put_share),
    Route("DELETE", "/indexes/{index_id}/shares/{grantee}", shares.remove_share),
    Route("GET", "/admin/users", admin.list_users),
    Route("POST", "/admin/users", admin.create_user),
    Route("POST", "/admin/users/{user_id}", admin.update_user),
    Route("GET", "/admin/tokens", admin.list_all_tokens),
    Route("GET", "/admin/audit", admin.audit_page),
)

ALL_ROUTES: tuple[Route, ...] = (*TABLE, *ACCOUNT_TABLE)
ROUTER = RouteTable(ALL_ROUTES)
match = ROUTER.match
