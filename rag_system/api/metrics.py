"""Prometheus text exposition, by hand (no client library needed).

Request counts by route pattern, method and status, and a latency histogram
per route, are recorded by the server; gauges that describe the service
(job counts, index sizes, saved turns) are read from callbacks at scrape
time. Route labels are the table's patterns (`/index/jobs/{id}`), never raw
paths, so the number of series stays bounded.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass

BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)

#: A gauge callback returns (label dict, value) rows.
GaugeRows = Iterable[tuple[dict[str, str], float]]


@dataclass
class _Histogram:
    counts: list[int]
    total: float = 0.0
    n: int = 0


def _labels(labels: dict[str, str]) -> str:
    if not labels:
        return ""
    body = ",".join(f'{k}="{_escape(v)}"' for k, v in labels.items())
    return "{" + body + "}"


def _escape(value: str) -> str:
    return str(value).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


class Metrics:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._requests: dict[tuple[str, str, str], int] = {}
        self._latency: dict[str, _Histogram] = {}
        self._gauges: list[tuple[str, str, str, Callable[[], GaugeRows]]] = []

    def observe(self, route: str, method: str, status: int, seconds: float) -> None:
        with self._lock:
            key = (route, method, str(status))
            self._requests[key] = self._requests.get(key, 0) + 1
            hist = self._latency.get(route)
            if hist is None:
                hist = self._latency[route] = _Histogram([0] * len(BUCKETS))
            for i, bound in enumerate(BUCKETS):
                if seconds <= bound:
                    hist.counts[i] += 1
            hist.total += seconds
            hist.n += 1

    def gauge(self, name: str, kind: str, help_text: str, rows: Callable[[], GaugeRows]) -> None:
        """Register a metric computed at scrape time (`kind` is gauge or counter)."""
        self._gauges.append((name, kind, help_text, rows))

    def requests(self, route: str, status: int | None = None) -> int:
        with self._lock:
            return sum(n for (r, _, s), n in self._requests.items()
                       if r == route and (status is None or s == str(status)))

    def render(self) -> str:
        lines = ["# HELP docent_rag_requests_total HTTP requests by route pattern, method and status.",
                 "# TYPE docent_rag_requests_total counter"]
        with self._lock:
            for (route, method, status), n in sorted(self._requests.items()):
                lines.append(f"docent_rag_requests_total{_labels({'route': route, 'method': method, 'status': status})} {n}")
            lines += ["# HELP docent_rag_request_duration_seconds Request latency by route pattern.",
                      "# TYPE docent_rag_request_duration_seconds histogram"]
            for route, hist in sorted(self._latency.items()):
                for bound, count in zip(BUCKETS, hist.counts):
                    lines.append(f"docent_rag_request_duration_seconds_bucket"
                                 f"{_labels({'route': route, 'le': _num(bound)})} {count}")
                lines.append(f"docent_rag_request_duration_seconds_bucket{_labels({'route': route, 'le': '+Inf'})} {hist.n}")
                lines.append(f"docent_rag_request_duration_seconds_sum{_labels({'route': route})} {hist.total:.6f}")
                lines.append(f"docent_rag_request_duration_seconds_count{_labels({'route': route})} {hist.n}")
        for name, kind, help_text, rows in self._gauges:
            lines += [f"# HELP {name} {help_text}", f"# TYPE {name} {kind}"]
            try:
                values = list(rows())
            except Exception as exc:  # a broken gauge must not break the scrape
                lines.append(f"# {name} unavailable: {type(exc).__name__}")
                continue
            lines.extend(f"{name}{_labels(labels)} {_num(value)}" for labels, value in values)
        return "\n".join(lines) + "\n"
