"""Per-query token accounting by stage (decompose, rerank, synthesis, repair ...).

Why: on a laptop LLM tokens are the cost; the response's `token_usage` tells
the user and the evaluation harness where they went. Stages can run on
worker threads (parallel sub-queries), so adding is locked.
"""

from __future__ import annotations

import threading
from typing import Any


class TokenLedger:
    """Prompt and completion tokens summed per stage, in first-use order."""

    def __init__(self) -> None:
        self._stages: dict[str, list[int]] = {}
        self._calls: dict[str, int] = {}
        self._lock = threading.Lock()

    def add(self, stage: str, prompt_tokens: int = 0, completion_tokens: int = 0) -> None:
        """Add one LLM call's counts to `stage` (counts are whole, non-negative)."""
        if not stage:
            raise ValueError("stage name must not be empty")
        for name, value in (("prompt_tokens", prompt_tokens), ("completion_tokens", completion_tokens)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{name} must be a non-negative int, got {value!r}")
        with self._lock:
            counts = self._stages.setdefault(stage, [0, 0])
            counts[0] += prompt_tokens
            counts[1] += completion_tokens
            self._calls[stage] = self._calls.get(stage, 0) + 1

    @property
    def total(self) -> dict[str, int]:
        with self._lock:
            return {"prompt": sum(c[0] for c in self._stages.values()),
                    "completion": sum(c[1] for c in self._stages.values())}

    def to_json(self) -> dict[str, Any]:
        """`{"stages": {stage: {"prompt", "completion"}}, "total": {"prompt", "completion"}}`."""
        with self._lock:
            stages = {name: {"prompt": c[0], "completion": c[1]} for name, c in self._stages.items()}
        return {"stages": stages, "total": {"prompt": sum(s["prompt"] for s in stages.values()),
                                            "completion": sum(s["completion"] for s in stages.values())}}

    def with_legacy_keys(self) -> dict[str, Any]:
        """`to_json()` plus localGPT's names, which its client reads: `by_stage` and
        `total {prompt_tokens, output_tokens, calls, total_tokens}` (one call is one `add`)."""
        out = self.to_json()
        with self._lock:
            calls = dict(self._calls)
        out["by_stage"] = {name: {"prompt_tokens": s["prompt"], "output_tokens": s["completion"],
                                  "total_tokens": s["prompt"] + s["completion"], "calls": calls.get(name, 0)}
                           for name, s in out["stages"].items()}
        total = out["total"]
        total.update(prompt_tokens=total["prompt"], output_tokens=total["completion"],
                     total_tokens=total["prompt"] + total["completion"], calls=sum(calls.values()))
        return out
