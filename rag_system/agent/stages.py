"""Where the query pipeline times and announces its stages: one table, one wrapper.

Why: a stage used to take `emit` and a `timings` dict and fill both as a side
effect, so every stage restated its event names and timing keys and could
leave them half-written on an error. Now a stage is a plain function from
typed inputs to a new value; `Stages.run` names it, emits its `_started` /
`_done` events (the SSE vocabulary of Documentation/api.md) and records its
time under the key `timings_ms` has always used. A stage that fails emits no
`_done` and records no time, so a reader never sees a stage finish that did
not.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from rag_system.generation.events import Emit, checked

T = TypeVar("T")


@dataclass(frozen=True)
class StageSpec:
    event: str | None  # prefix of its `<event>_started` / `<event>_done` events; None: it emits none itself
    timing: str  # its key in `timings_ms`


#: Every stage the pipeline runs, by name.
STAGES: dict[str, StageSpec] = {
    "retrieval": StageSpec("retrieval", "retrieval_ms"),
    "retry": StageSpec(None, "retry_ms"),  # announced as `retrieval_retry` once its result is compared
    "rerank": StageSpec("rerank", "rerank_ms"),
    "expand": StageSpec("context_expand", "expand_ms"),
    "synthesis": StageSpec(None, "synthesis_ms"),  # the synthesizer streams its own events
}


class Stages:
    """One request's stage clock: what ran, in what order, for how long."""

    def __init__(self, emit: Emit) -> None:
        self.emit = checked(emit)
        self.timings_ms: dict[str, float] = {}

    def run(self, name: str, work: Callable[[], T], started: dict[str, Any] | None = None,
            done: Callable[[T], dict[str, Any]] | None = None) -> T:
        """`work()`, timed and announced as stage `name`; its value is returned unchanged."""
        spec = STAGES[name]
        if spec.event is not None:
            self.emit(f"{spec.event}_started", started or {})
        t0 = time.perf_counter()
        value = work()
        self.timings_ms[spec.timing] = (time.perf_counter() - t0) * 1000
        if spec.event is not None:
            self.emit(f"{spec.event}_done", done(value) if done is not None else {})
        return value
