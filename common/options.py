"""The option vocabulary both services validate against: retrieval modes, fusions, key spelling.

The gateway checks a chat's options before it stores the question, the RAG API when it builds the
request and its settings at start-up; all three read these, so they can never disagree on a name.
"""

from __future__ import annotations

import re

#: `retrieval_mode` (localGPT: `search_type`).
MODES = ("hybrid", "vector_only", "fts_only")
#: "meanmax": scores normalised from each ranking's mean (0) to its best (1);
#: "score": from its minimum; "rrf": reciprocal rank (Documentation/evaluation.md).
FUSIONS = ("meanmax", "score", "rrf")

_CAMEL = re.compile(r"(?<=[a-z0-9])([A-Z])")


def snake_case(name: str) -> str:
    """`retrievalK` -> `retrieval_k`, `forceRag` -> `force_rag`; snake_case stays as it is."""
    return _CAMEL.sub(r"_\1", name).lower()
