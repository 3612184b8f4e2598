"""The gateway's `GET /metrics` through `prometheus_client`, one registry per App (no global default registry)."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.exposition import choose_encoder
from prometheus_client.metrics_core import GaugeMetricFamily, Metric

BUCKETS_S = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0)


class _Scrape:
    """The registry plus the SQLite row counts of this scrape (read per scrape, never kept)."""

    def __init__(self, registry: CollectorRegistry, stats: dict[str, int] | None) -> None:
        self.registry, self.stats = registry, stats or {}

    def collect(self) -> Iterator[Metric]:
        yield from self.registry.collect()
        if not self.stats:
            return
        family = GaugeMetricFamily("docent_gateway_store_rows", "Rows in the gateway's SQLite tables.",
                                   labels=("table",))
        for table, n in sorted(self.stats.items()):
            family.add_metric((table,), n)
        yield family


class Metrics:
    def __init__(self) -> None:
        self.registry = r = CollectorRegistry()
        self._requests = Counter("docent_gateway_requests", "HTTP requests by method, route and status.",
                                 ("method", "route", "status"), registry=r)
        self._latency = Histogram("docent_gateway_request_seconds", "Request latency by route.", ("route",),
                                  buckets=BUCKETS_S, registry=r)
        self._in_flight = Gauge("docent_gateway_in_flight_requests", "Requests being served.", registry=r)
        self._rag_errors = Counter("docent_gateway_rag_api_errors", "Failed calls to the RAG API by error code.",
                                   ("code",), registry=r)
        self._routes = Counter("docent_gateway_chat_routes", "Chat messages by routing decision.", ("route",),
                               registry=r)
        self._upload_bytes = Counter("docent_gateway_upload_bytes", "Bytes of uploaded files stored.", registry=r)

    def started(self) -> None:
        self._in_flight.inc()

    def finished(self, method: str, route: str, status: int, seconds: float) -> None:
        self._in_flight.dec()
        self._requests.labels(method, route, str(status)).inc()
        self._latency.labels(route).observe(seconds)

    def rag_error(self, code: str) -> None:
        self._rag_errors.labels(code).inc()

    def chat_routed(self, route: str) -> None:
        self._routes.labels(route).inc()

    def uploaded(self, size: int) -> None:
        self._upload_bytes.inc(size)

    def render(self, stats: dict[str, int] | None = None, accept: str = "") -> tuple[bytes, str]:
        """The exposition in the format the scraper's `Accept` asks for, and its content type."""
        encode, content_type = choose_encoder(accept)
        return encode(_Scrape(self.registry, stats)), content_type
