"""Real HTTP health checks of the services, and the table `--health` prints.

Why here and not in the services: the launcher decides readiness the same
way for start-up ordering, for `--health` and for the restart loop, from the
outside, over the same HTTP a user or a load balancer would use.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class HealthResult:
    service: str
    url: str
    healthy: bool
    status: str  # "ok", "degraded", "unavailable", "unreachable", ...
    http_status: int | None = None
    latency_ms: float | None = None
    detail: str = ""
    body: Any = None


def check(service: str, base_url: str, timeout: float = 5.0, path: str = "/health") -> HealthResult:
    """GET `<base_url><path>`; healthy means HTTP 200 and, when the body says, status ok/degraded.

    The gateway answers "degraded" when the RAG API is down: that is the RAG
    API's problem (reported on its own row), the gateway itself is serving.
    """
    url = base_url.rstrip("/") + path
    t0 = time.perf_counter()
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:  # noqa: S310 (our own URL)
            code, raw = resp.status, resp.read()
    except urllib.error.HTTPError as err:
        code, raw = err.code, err.read()
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        return HealthResult(service, url, False, "unreachable", detail=str(reason))
    latency = (time.perf_counter() - t0) * 1000
    body: Any
    try:
        body = json.loads(raw) if raw else None
    except ValueError:
        body = None
    status = str(body.get("status", "")) if isinstance(body, dict) else ""
    healthy = code == 200 and status in ("", "ok", "degraded")
    return HealthResult(service, url, healthy, status or ("ok" if code == 200 else "unavailable"), code,
                        round(latency, 1), _detail(service, body), body)


def _detail(service: str, body: Any) -> str:
    if not isinstance(body, dict):
        return ""
    components = body.get("components")
    if isinstance(components, dict):
        llm = components.get("llm") or {}
        bad = sorted(k for k, v in components.items() if isinstance(v, dict) and v.get("ok") is False)
        parts = [f"llm={llm.get('chosen', '?')}"] if isinstance(llm, dict) else []
        if bad:
            parts.append("failing: " + ",".join(bad))
        return " ".join(parts)
    rag = body.get("rag_api")
    if isinstance(rag, dict):
        return f"rag_api={rag.get('status', '?')}"
    return ""


def wait_healthy(service: str, base_url: str, deadline_s: float, is_running: Any = None,
                 interval: float = 0.5) -> HealthResult:
    """Poll until healthy, the deadline passes, or `is_running()` says the process died."""
    end = time.monotonic() + deadline_s
    result = check(service, base_url, timeout=min(5.0, deadline_s))
    while not result.healthy and time.monotonic() < end:
        if is_running is not None and not is_running():
            return HealthResult(service, base_url, False, "exited", detail="the process exited while starting")
        time.sleep(interval)
        result = check(service, base_url, timeout=5.0)
    return result


def table(results: list[HealthResult]) -> str:
    rows = [("SERVICE", "STATUS", "HTTP", "MS", "URL", "DETAIL")]
    for r in results:
        rows.append((r.service, r.status if r.healthy else f"{r.status} (unhealthy)",
                     "-" if r.http_status is None else str(r.http_status),
                     "-" if r.latency_ms is None else f"{r.latency_ms:.0f}", r.url, r.detail))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row[:-1], widths)) + "  " + row[-1]
                     for row in rows).rstrip()
