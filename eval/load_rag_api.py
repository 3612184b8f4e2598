"""Load benchmark of the RAG API: `python -m eval.load_rag_api [--data-dir ../shared/eval-data]
[--seconds 60] [--clients 16] [--store DIR --index NAME --gold rfc,pydocs]`.

Starts `python -m rag_system api` as a subprocess on a free loopback port with
`DOCENT_DATA_DIR` in a temporary folder, builds the localGPT `mixed` corpus
through `POST /index`, then measures two phases with the same background
work (an index job of the `acquisition` corpus rebuilt in a loop, so the
single writer is busy the whole time):

1. one client for `--single-seconds`,
2. `--clients` concurrent clients for `--seconds`,

each client alternating `POST /retrieve` and `POST /chat` (`backend:
extractive`) over the corpus's gold questions. Prints throughput and p50/p95
per route, the ratio of N-client to 1-client throughput (the target is >= 1.8 at 16
clients, Documentation/architecture.md), the error count (must be 0) and the server's peak
resident memory (VmHWM). Numbers only; nothing here asserts.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROUTES = ("/retrieve", "/chat")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _call(conn: http.client.HTTPConnection, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    conn.request(method, path, body=data, headers={"Content-Type": "application/json"} if data else {})
    resp = conn.getresponse()
    raw = resp.read()
    try:
        return resp.status, json.loads(raw) if raw else None
    except json.JSONDecodeError:
        return resp.status, raw.decode(errors="replace")


def _rss(pid: int) -> dict[str, int]:
    out: dict[str, int] = {}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(("VmRSS:", "VmHWM:")):
                out[line.split(":")[0]] = int(line.split()[1]) // 1024
    except OSError:
        pass
    return out


class Server:
    def __init__(self, data_dir: Path, port: int, log_path: Path) -> None:
        env = {**os.environ, "DOCENT_DATA_DIR": str(data_dir), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
               "LLM_PRELOAD": "false", "OLLAMA_HOST": "http://127.0.0.1:9", "DOCENT_GATEWAY_URL": "http://127.0.0.1:9"}
        env.pop("DOCENT_API_TOKEN", None)
        self.log = log_path.open("w")
        self.proc = subprocess.Popen([sys.executable, "-m", "rag_system", "api", "--port", str(port)],
                                     env=env, stdout=self.log, stderr=subprocess.STDOUT)
        self.port = port

    def connect(self) -> http.client.HTTPConnection:
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=300)

    def wait_ready(self, timeout: float = 300) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit(f"the API exited with {self.proc.returncode}; see {self.log.name}")
            try:
                status, _ = _call(self.connect(), "GET", "/health")
                if status == 200:
                    return
            except OSError:
                pass
            time.sleep(0.5)
        raise SystemExit("the API did not become ready")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


def build(server: Server, index: str, paths: list[str]) -> dict[str, Any]:
    conn = server.connect()
    status, body = _call(conn, "POST", "/index", {"index": index, "paths": paths})
    if status != 202:
        raise SystemExit(f"POST /index failed: {status} {body}")
    while True:
        _, job = _call(conn, "GET", f"/index/jobs/{body['job_id']}")
        if job["state"] in ("done", "failed", "cancelled"):
            return job
        time.sleep(0.5)


class Background:
    """Keeps one index job running: rebuild a corpus under fresh names, deleting the previous one."""

    def __init__(self, server: Server, paths: list[str]) -> None:
        self.server, self.paths = server, paths
        self.stop = threading.Event()
        self.jobs: list[dict[str, Any]] = []
        self.errors: list[str] = []
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        n = 0
        while not self.stop.is_set():
            n += 1
            job = build(self.server, f"bg{n}", self.paths)
            self.jobs.append({"state": job["state"], "seconds": (job.get("summary") or {}).get("seconds")})
            if job["state"] != "done":
                self.errors.append(f"bg{n}: {job['state']} {job['error']}")
            status, body = _call(self.server.connect(), "DELETE", f"/indexes/bg{n}")
            if status != 200:
                self.errors.append(f"DELETE bg{n}: {status} {body}")


def phase(server: Server, clients: int, seconds: float, queries: list[str], index: str) -> dict[str, Any]:
    latencies: dict[str, list[float]] = {r: [] for r in ROUTES}
    errors: list[str] = []
    lock = threading.Lock()
    start = time.monotonic()
    end = start + seconds

    def client(number: int) -> None:
        conn = server.connect()
        sent = 0
        while time.monotonic() < end:
            route = ROUTES[(number + sent) % 2]  # every client alternates; half start with each route
            query = queries[(number * 7 + sent // 2) % len(queries)]
            sent += 1
            body: dict[str, Any] = {"query": query, "index": index}
            if route == "/chat":
                body["backend"] = "extractive"
            t0 = time.perf_counter()
            try:
                status, payload = _call(conn, "POST", route, body)
            except (OSError, http.client.HTTPException) as exc:
                status, payload = 0, f"{type(exc).__name__}: {exc}"
                conn = server.connect()
            took = time.perf_counter() - t0
            with lock:
                if status == 200:
                    latencies[route].append(took)
                else:
                    errors.append(f"{route} {status} {str(payload)[:200]}")

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - start
    routes = {}
    for route, values in latencies.items():
        values.sort()
        routes[route] = {
            "requests": len(values), "per_s": round(len(values) / elapsed, 2),
            "p50_ms": round(statistics.median(values) * 1000, 1) if values else None,
            "p95_ms": round(values[min(len(values) - 1, int(0.95 * len(values)))] * 1000, 1) if values else None,
        }
    total = sum(len(v) for v in latencies.values())
    return {"clients": clients, "seconds": round(elapsed, 1), "requests": total,
            "per_s": round(total / elapsed, 2), "errors": len(errors), "error_samples": errors[:5],
            "routes": routes}


def _questions(args: argparse.Namespace) -> list[str]:
    from eval.corpora import known_corpora, load_gold

    corpora = known_corpora(args.data_dir)
    return [row.query for name in args.gold.split(",") for row in load_gold(corpora[name].gold)]


def run(args: argparse.Namespace) -> dict[str, Any]:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from eval.corpora import known_corpora

    corpora = known_corpora(args.data_dir)
    mixed, background = corpora["mixed"], corpora["acq"]
    missing = [str(p) for p in (*mixed.sources, *background.sources) if not p.exists()]
    if missing:
        raise SystemExit(f"missing data: {', '.join(missing)}")
    queries = _questions(args)
    tmp = Path(tempfile.mkdtemp(prefix="docent-load-"))
    # --store: an existing data folder (e.g. eval.bench_scale_1m's --work-dir) whose index is asked
    # as it is; the background job writes its own index there and the folder is kept.
    data = args.store or tmp / "data"
    uploads = data / "uploads" / f"load-{os.getpid()}"
    try:
        for name, sources in (("mixed", mixed.sources), ("acq", background.sources)):
            if name == "mixed" and args.store:
                continue
            (uploads / name).mkdir(parents=True, exist_ok=True)
            for src in sources:
                if src.is_dir():
                    shutil.copytree(src, uploads / name / src.name)
                else:
                    shutil.copy2(src, uploads / name / src.name)
        server = Server(data, _free_port(), tmp / "server.log")
        try:
            t0 = time.monotonic()
            server.wait_ready()
            ready_s = time.monotonic() - t0
            idle_rss = _rss(server.proc.pid)
            t0 = time.monotonic()
            if args.store:
                index = args.index
                job = {"progress": {"total": None}, "summary": {"chunks": _chunks(server, index)}}
            else:
                index = "mixed"
                job = build(server, "mixed", [str(uploads / "mixed")])
                if job["state"] != "done":
                    raise SystemExit(f"building the benchmark index failed: {job['error']}")
            build_s = time.monotonic() - t0
            bg = Background(server, [str(uploads / "acq")])
            bg.thread.start()
            phase(server, 1, 3, queries, index)  # warm-up
            single = phase(server, 1, args.single_seconds, queries, index)
            many = phase(server, args.clients, args.seconds, queries, index)
            bg.stop.set()
            bg.thread.join(300)
            peak = _rss(server.proc.pid)
        finally:
            server.stop()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(uploads, ignore_errors=True)
    return {
        "server": {"ready_s": round(ready_s, 1), "idle_rss_mb": idle_rss.get("VmRSS"),
                   "peak_rss_mb": peak.get("VmHWM"), "rss_at_end_mb": peak.get("VmRSS")},
        "index": {"name": index, "files": job["progress"]["total"], "chunks": job["summary"]["chunks"],
                  "build_s": round(build_s, 1)},
        "background_jobs": {"completed": len(bg.jobs), "errors": bg.errors},
        "single": single, "concurrent": many,
        "ratio": round(many["per_s"] / single["per_s"], 2) if single["per_s"] else None,
        "errors": single["errors"] + many["errors"] + len(bg.errors),
        "cpus": os.cpu_count(), "load_average_end": [round(x, 2) for x in os.getloadavg()],
    }


def _chunks(server: Server, index: str) -> int:
    status, payload = _call(server.connect(), "GET", "/indexes")
    if status != 200:
        raise SystemExit(f"GET /indexes answered {status}: {payload}")
    for row in payload["indexes"]:
        if row["name"] == index:
            return row["chunks"]
    raise SystemExit(f"no index {index!r} in {server.port}'s /indexes")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data-dir", type=Path, default=Path("../shared/eval-data"))
    p.add_argument("--seconds", type=float, default=60.0, help="length of the concurrent phase")
    p.add_argument("--single-seconds", type=float, default=30.0, help="length of the one-client phase")
    p.add_argument("--clients", type=int, default=16)
    p.add_argument("--json", action="store_true", help="print only the JSON result")
    p.add_argument("--store", type=Path, help="an existing data folder to ask instead of building mixed")
    p.add_argument("--index", default="mixed", help="the index of --store to ask")
    p.add_argument("--gold", default="mixed", help="corpora whose gold questions the clients ask (e.g. rfc,pydocs)")
    args = p.parse_args()
    result = run(args)
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"server: ready in {result['server']['ready_s']} s; RSS idle {result['server']['idle_rss_mb']} MB, "
          f"peak {result['server']['peak_rss_mb']} MB")
    print(f"index: {result['index']['files']} files, {result['index']['chunks']} chunks in "
          f"{result['index']['build_s']} s; background index jobs completed during the phases: "
          f"{result['background_jobs']['completed']}")
    for name in ("single", "concurrent"):
        ph = result[name]
        print(f"{ph['clients']:>2} client(s), {ph['seconds']} s: {ph['per_s']} req/s, {ph['errors']} errors")
        for route, r in ph["routes"].items():
            print(f"    {route:<10} {r['per_s']:>7} req/s  p50 {r['p50_ms']} ms  p95 {r['p95_ms']} ms  "
                  f"({r['requests']} requests)")
    print(f"throughput ratio {result['concurrent']['clients']}:1 = {result['ratio']}; errors total {result['errors']}")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
