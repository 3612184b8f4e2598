"""localGPT's build options (`POST /indexes/<id>/build`): applied, or answered with a warning.

localGPT's index form sends its whole chunking and enrichment configuration with every build.
Docent applies what it has an equivalent for — the chunk size and the embedding model, per
index — and answers everything else with a `warnings` entry the client can show, so no option
is silently dropped. Options are read in snake_case or camelCase.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from common.errors import ApiError
from common.options import BY_NAME, CHUNK_SIZE, MAX_EMBEDDING_MODEL_CHARS, normalise_keys, read_options

#: Options with no Docent equivalent -> why (said only when the value asks for something).
_NOT_APPLIED = {
    "enable_enrich": "contextual enrichment of chunks by an LLM is not implemented; chunks carry their "
                     "document title and section path instead",
    "latechunk": "late chunking is not implemented",
    "enable_latechunk": "late chunking is not implemented",
    "window_size": "the context window is chosen per question in Docent (context_window_size)",
    "enrich_model": "contextual enrichment is not implemented",
    "overview_model": "document overviews are not built",
    "batch_size_embed": "the embedding batch size is a setting (EMBEDDING_BATCH_SIZE)",
    "batch_size_enrich": "contextual enrichment is not implemented",
}


@dataclass
class BuildOptions:
    chunk_size: int | None = None
    embedding_model: str | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def applied(self) -> dict[str, Any]:
        """The options Docent applies, recorded on the index (localGPT's index panel shows them)."""
        return {k: v for k, v in (("chunk_size", self.chunk_size),) if v is not None}


def read_build_options(raw: dict[str, Any]) -> BuildOptions:
    body = normalise_keys(raw)
    read = read_options(body, (CHUNK_SIZE, BY_NAME["retrieval_mode"]))
    out = BuildOptions(chunk_size=read.get("chunk_size"))
    model = body.get("embedding_model")
    if model is not None:
        if not isinstance(model, str) or len(model) > MAX_EMBEDDING_MODEL_CHARS:
            raise ApiError(400, "invalid_option", "embedding_model must be a string")
        out.embedding_model = model or None
    for name, why in _NOT_APPLIED.items():
        value = body.get(name)
        if value not in (None, False, "", 0):
            out.warnings.append(f"{name} is not applied: {why}")
    if body.get("docling_chunk") is False:
        out.warnings.append("docling_chunk is not applied: Docent always chunks by document structure")
    if read.get("retrieval_mode") in ("vector_only", "fts_only"):
        out.warnings.append(f"retrieval_mode {read['retrieval_mode']} is not applied to the build: every index "
                            "has both the vector and the full-text table; choose the mode per question "
                            "(retrieval_mode or search_type on chat)")
    return out
