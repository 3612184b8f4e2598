"""Per-user rate limits on chat and uploads: a sliding one-minute window, answered 429 + Retry-After.

Kept in memory (it protects this process's CPU; a restart forgets it, which is harmless), one
lock for all users: the work under it is a deque trim, far cheaper than any request it guards.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque

from common.errors import ApiError

WINDOW_S = 60.0


class RateLimiter:
    def __init__(self, per_minute: dict[str, int]) -> None:
        self._limits = dict(per_minute)
        self._seen: dict[tuple[str, str], deque[float]] = {}
        self._lock = threading.Lock()

    def hit(self, kind: str, who: str, now: float | None = None) -> None:
        """Count one `kind` request of `who`; 429 when the last minute already had the limit."""
        limit = self._limits[kind]
        at = time.monotonic() if now is None else now
        with self._lock:
            seen = self._seen.setdefault((kind, who), deque())
            while seen and at - seen[0] >= WINDOW_S:
                seen.popleft()
            if len(seen) >= limit:
                wait = max(1, math.ceil(WINDOW_S - (at - seen[0])))
                raise ApiError(429, "rate_limited", f"too many {kind} requests: at most {limit} a minute; "
                               f"try again in {wait} s", {"Retry-After": str(wait)}, retry_after_s=wait)
            seen.append(at)
