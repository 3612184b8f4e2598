"""The route table: (method, path pattern) -> handler (`common.http.RouteTable` matches; 404/405 come from it)."""

from __future__ import annotations

from backend import handlers_chat as chat
from backend import handlers_documents as documents
from backend import handlers_indexes as indexes
from backend import handlers_llm as llm
from backend import handlers_openai as openai
from backend import handlers_sessions as sessions
from backend import handlers_sync as sync
from backend import handlers_system as system
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
    Route("POST", "/indexes/{index_id}/build", indexes.build),
    Route("GET", "/indexes/{index_id}/jobs/{job_id}", indexes.job),
    Route("GET", "/indexes/{index_id}/sync", sync.status),
    Route("POST", "/indexes/{index_id}/sync", sync.trigger),
    Route("POST", "/indexes/{index_id}/sync/folders", sync.bind),
    Route("DELETE", "/indexes/{index_id}/sync/folders", sync.unbind),
    Route("GET", "/documents/{document_id}/pages/{page}.png", documents.page_image),
    Route("GET", "/documents/{document_id}/file", documents.original_file),
    # The OpenAI-compatible door (model `docent/<index name>`), same bearer token.
    Route("GET", "/v1/models", openai.list_models),
    Route("POST", "/v1/chat/completions", openai.chat_completions),
)

ROUTER = RouteTable(TABLE)
match = ROUTER.match
allowed_methods = ROUTER.methods
