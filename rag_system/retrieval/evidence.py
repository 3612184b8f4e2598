"""The evidence the answering path shares: the numbered blocks packed for the model and the packed context.

Why a module of their own: the packer (packer.py) makes these records, but the writer, the citation
checks, the whole-document tasks and the inspector all read them; they import the records from here,
not from the packing rules.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rag_system.retrieval.types import Candidate

BLOCK_SEPARATOR = "\n\n"


@dataclass(frozen=True)
class EvidenceBlock:
    number: int  # 1-based; what the answer cites as [n]
    candidate: Candidate
    label: str
    text: str  # what the prompt shows: the (possibly pruned or truncated) text, without the label
    tokens: int  # tokens of `rendered`
    truncated: bool = False
    full_text: str | None = None  # the whole block when `text` is an excerpt of it
    in_prompt: bool = True  # False: a block only quoting may use (`widen`), never shown to the model
    rank: int = 0  # position in the retriever's order (`widen` renumbers; quoting decays by rank, not number)

    @property
    def rendered(self) -> str:
        return f"{self.label}\n{self.text}"

    @property
    def source_text(self) -> str:
        """What citations are checked against and source cards show: the whole block, not the excerpt."""
        return self.text if self.full_text is None else self.full_text

    def to_json(self) -> dict[str, Any]:
        return {"number": self.number, "label": self.label, "chunk_id": self.candidate.chunk_id,
                "tokens": self.tokens, "truncated": self.truncated, "in_prompt": self.in_prompt}


@dataclass
class PackedContext:
    blocks: list[EvidenceBlock]
    budget_tokens: int
    used_tokens: int  # sum of block tokens (separators are not counted)
    dropped: list[Candidate] = field(default_factory=list)
    truncated_block: int | None = None  # number of the cut block, if any

    @property
    def text(self) -> str:
        """What the model reads: the blocks in its prompt."""
        return BLOCK_SEPARATOR.join(b.rendered for b in self.blocks if b.in_prompt)

    def to_json(self) -> dict[str, Any]:
        return {"blocks": [b.to_json() for b in self.blocks], "budget_tokens": self.budget_tokens,
                "used_tokens": self.used_tokens, "truncated_block": self.truncated_block,
                "dropped": [c.chunk_id for c in self.dropped]}
