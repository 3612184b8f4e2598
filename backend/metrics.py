"""Request metrics in the Prometheus text format (`GET /metrics`), thread-safe, no dependency."""

from __future__ import annotations

import threading
from collections import defaultdict

BUCKETS_S = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0)


class Metrics:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._requests: dict[tuple[str, str, int], int] = defaultdict(int)
        self._hist: dict[str, list[int]] = defaultdict(lambda: [0] * (len(BUCKETS_S) + 1))
        self._sum: dict[str, float] = defaultdict(float)
        self._rag_errors: dict[str, int] = defaultdict(int)
        self._routes: dict[str, int] = defaultdict(int)
        self._upload_bytes = 0
        self._in_flight = 0

    def started(self) -> None:
        with self._lock:
            self._in_flight += 1

    def finished(self, method: str, route: str, status: int, seconds: float) -> None:
        with self._lock:
            self._in_flight -= 1
            self._requests[(method, route, status)] += 1
            hist = self._hist[route]
            for i, bound in enumerate(BUCKETS_S):
                if seconds <= bound:
                    hist[i] += 1
                    break
            else:
                hist[-1] += 1
            self._sum[route] += seconds

    def rag_error(self, code: str) -> None:
        with self._lock:
            self._rag_errors[code] += 1

    def chat_routed(self, route: str) -> None:
        with self._lock:
            self._routes[route] += 1

    def uploaded(self, size: int) -> None:
        with self._lock:
            self._upload_bytes += size

    def render(self, stats: dict[str, int] | None = None) -> str:
        lines: list[str] = []
        with self._lock:
            lines += ["# HELP docent_gateway_requests_total HTTP requests by method, route and status.",
                      "# TYPE docent_gateway_requests_total counter"]
            for (method, route, status), n in sorted(self._requests.items()):
                lines.append(f'docent_gateway_requests_total{{method="{method}",route="{_esc(route)}",'
                             f'status="{status}"}} {n}')
            lines += ["# HELP docent_gateway_request_seconds Request latency by route.",
                      "# TYPE docent_gateway_request_seconds histogram"]
            for route, hist in sorted(self._hist.items()):
                total = 0
                label = _esc(route)
                for bound, n in zip(BUCKETS_S, hist, strict=False):
                    total += n
                    lines.append(f'docent_gateway_request_seconds_bucket{{route="{label}",le="{bound}"}} {total}')
                total += hist[-1]
                lines.append(f'docent_gateway_request_seconds_bucket{{route="{label}",le="+Inf"}} {total}')
                lines.append(f'docent_gateway_request_seconds_sum{{route="{label}"}} {self._sum[route]:.6f}')
                lines.append(f'docent_gateway_request_seconds_count{{route="{label}"}} {total}')
            lines += ["# HELP docent_gateway_in_flight_requests Requests being served.",
                      "# TYPE docent_gateway_in_flight_requests gauge",
                      f"docent_gateway_in_flight_requests {self._in_flight}",
                      "# HELP docent_gateway_rag_api_errors_total Failed calls to the RAG API by error code.",
                      "# TYPE docent_gateway_rag_api_errors_total counter"]
            lines += [f'docent_gateway_rag_api_errors_total{{code="{_esc(c)}"}} {n}'
                      for c, n in sorted(self._rag_errors.items())]
            lines += ["# HELP docent_gateway_chat_routes_total Chat messages by gate decision.",
                      "# TYPE docent_gateway_chat_routes_total counter"]
            lines += [f'docent_gateway_chat_routes_total{{route="{r}"}} {n}' for r, n in sorted(self._routes.items())]
            lines += ["# HELP docent_gateway_upload_bytes_total Bytes of uploaded files stored.",
                      "# TYPE docent_gateway_upload_bytes_total counter",
                      f"docent_gateway_upload_bytes_total {self._upload_bytes}"]
        if stats:
            lines += ["# HELP docent_gateway_store_rows Rows in the gateway's SQLite tables.",
                      "# TYPE docent_gateway_store_rows gauge"]
            lines += [f'docent_gateway_store_rows{{table="{t}"}} {n}' for t, n in sorted(stats.items())]
        return "\n".join(lines) + "\n"


def _esc(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
