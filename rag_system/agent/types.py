"""Types shared by the agent steps, and the one door to an optional LLM.

The default generators are tiny (0.5B-1.5B) instruct models: they follow
formats loosely and sometimes fail outright. So every step calls them through
`ask_generator`, which turns any exception or empty output into `None`, and
each step validates what comes back before using it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Literal, Protocol

log = logging.getLogger(__name__)

Role = Literal["user", "assistant"]


class TextGenerator(Protocol):
    """Anything that completes a prompt (an LLM backend adapter).

    Callers pass `None` instead when no LLM is available; every agent step
    then uses its rule-based path.
    """

    def __call__(self, prompt: str, *, max_tokens: int) -> str: ...


@dataclass(frozen=True)
class Turn:
    """One message of a conversation.

    `standalone` is the rewritten, self-contained form of a user question
    (when memory rewrote it); later follow-ups resolve against it, so a chain
    of follow-ups keeps its referent.
    """

    role: Role
    text: str
    standalone: str | None = None

    @property
    def resolved(self) -> str:
        return self.standalone or self.text


def ask_generator(generator: TextGenerator | None, prompt: str, max_tokens: int,
                  step: str) -> str | None:
    """Call the optional LLM; `None` when absent, failing or empty.

    Why: an agent step is a refinement, never a reason for a query to fail.
    """
    if generator is None:
        return None
    try:
        text = generator(prompt, max_tokens=max_tokens)
    except Exception as exc:  # any backend failure degrades to the rules
        log.warning("%s: generator failed, using rules (%s: %s)", step, type(exc).__name__, exc)
        return None
    if not isinstance(text, str) or not text.strip():
        log.info("%s: generator returned nothing usable", step)
        return None
    return text.strip()
