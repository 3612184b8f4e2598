"""General chat: a message that searches no documents, answered by the configured model.

A question with no index selected, or one the routing calls small talk, is answered the way
localGPT answers it: by the language model, with the conversation so far, no citations and
`answer_source: "direct"`. The reply says it did not come from the documents only by what it
is (no citations); the system prompt keeps the model from pretending otherwise. An install
with only the extractive backend has no model to chat with, and says so plainly instead of
producing a canned sentence that looks like an answer; small talk keeps its short reply there.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field

from rag_system.agent.triage import direct_reply, triage
from rag_system.agent.types import Turn
from rag_system.generation.llm import GenerationParams, LLMBackend, LLMError, Message, StreamResult
from rag_system.generation.events import Emit
from rag_system.generation.synthesis import Cancelled

log = logging.getLogger(__name__)

#: How many earlier messages the model sees (a chat tile's context, not a document search).
HISTORY_MESSAGES = 12
SYSTEM_PROMPT = ("You are Docent, a helpful assistant running offline on this machine. No documents are "
                 "being searched for this message: answer from general knowledge, briefly and plainly, and "
                 "say so when you are not sure. Do not invent document citations.")
NO_MODEL = ("No language model is configured on this install (only the extractive backend, which quotes "
            "documents and cannot chat), so I can only answer questions about documents: create or pick "
            "an index, add documents, and ask again. To chat, configure a model (Documentation/configuration.md, "
            "LLM_BACKEND).")


@dataclass
class DirectReply:
    text: str
    backend: str = "none"
    model: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    warnings: list[str] = field(default_factory=list)


def answer_directly(query: str, history: tuple[Turn, ...], kind: str | None, chain: list[LLMBackend],
                    params: GenerationParams, emit: Emit, cancel: threading.Event | None) -> DirectReply:
    """The model's reply, streamed as `token` events; the plain 'no model' reply without one."""
    backend = next((b for b in chain if b.generative), None)
    if backend is None:
        return DirectReply(direct_reply(triage(query)) if kind else NO_MODEL)
    messages = [Message("system", SYSTEM_PROMPT),
                *(Message(t.role, t.text) for t in history[-HISTORY_MESSAGES:]), Message("user", query)]
    result = StreamResult()
    pieces: list[str] = []
    try:
        for piece in backend.stream(messages, params, result):
            if cancel is not None and cancel.is_set():
                raise Cancelled()
            pieces.append(piece)
            emit("token", {"text": piece})
    except LLMError as exc:
        log.warning("general chat with %s failed: %s", backend.name, exc)
        fallback = direct_reply(triage(query)) if kind else NO_MODEL
        return DirectReply("".join(pieces) or fallback, backend.name,
                           warnings=[f"the {backend.name} model could not answer ({exc})"])
    done = result.completion
    text = (done.text if done is not None else "".join(pieces)).strip()
    return DirectReply(text, backend.name, done.model if done is not None else "",
                       done.prompt_tokens if done is not None else 0,
                       done.completion_tokens if done is not None else 0)
