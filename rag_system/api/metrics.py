"""`GET /metrics` through `prometheus_client`, one registry per service (no global default registry).

Request counts and latency are recorded by the server; gauges that describe the
service (job counts, index sizes, saved turns) are read from callbacks at scrape
time. Route labels are the table's patterns (`/index/jobs/{id}`), never raw
paths, so the number of series stays bounded.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.exposition import choose_encoder
from prometheus_client.metrics_core import Metric

BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)

#: A gauge callback returns (label dict, value) rows.
GaugeRows = Iterable[tuple[dict[str, str], float]]


class _Callbacks:
    """A collector for the scrape-time metrics; a callback that raises yields an empty family whose help says
    so, because a broken gauge must not break the scrape."""

    def __init__(self) -> None:
        self.families: list[tuple[str, str, str, Callable[[], GaugeRows]]] = []

    def collect(self) -> Iterator[Metric]:
        for name, kind, help_text, rows in self.families:
            base = name.removesuffix("_total") if kind == "counter" else name
            try:
                values = list(rows())
            except Exception as exc:
                yield Metric(base, f"unavailable: {type(exc).__name__}", kind)
                continue
            family = Metric(base, help_text, kind)
            for labels, value in values:
                family.add_sample(name if kind != "counter" else base + "_total", labels, value)
            yield family


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self._requests = Counter("docent_rag_requests", "HTTP requests by route pattern, method and status.",
                                 ("route", "method", "status"), registry=self.registry)
        self._latency = Histogram("docent_rag_request_duration_seconds", "Request latency by route pattern.",
                                  ("route",), buckets=BUCKETS, registry=self.registry)
        self._callbacks = _Callbacks()
        self.registry.register(self._callbacks)

    def observe(self, route: str, method: str, status: int, seconds: float) -> None:
        self._requests.labels(route, method, str(status)).inc()
        self._latency.labels(route).observe(seconds)

    def gauge(self, name: str, kind: str, help_text: str, rows: Callable[[], GaugeRows]) -> None:
        """Register a metric computed at scrape time (`kind` is gauge or counter)."""
        self._callbacks.families.append((name, kind, help_text, rows))

    def render(self, accept: str = "") -> tuple[bytes, str]:
        """The exposition in the format the scraper's `Accept` asks for, and its content type."""
        encode, content_type = choose_encoder(accept)
        return encode(self.registry), content_type
