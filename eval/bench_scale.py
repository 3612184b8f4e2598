"""Scale-out benchmark: `python -m eval.bench_scale [--corpus docs] [--seconds 30] [--clients 16]`.

1. First-stage latency: the corpus is indexed once on local disk, the same
   tables are copied to a SeaweedFS bucket on loopback, and every gold query is
   retrieved (`RetrievalEngine.retrieve`, hybrid, no reranking; the query
   embedding is included and identical on both) `--repeat` times from each
   store. Prints p50/p95 per store; S3 is measured with the replica setting
   `DOCENT_READ_CONSISTENCY_S=5` and with 0 (a version check per query).
2. Chat throughput through the gateway: reader processes
   (`DOCENT_ROLE=reader`, read-only credentials) over the S3 copy, and a
   gateway whose `RAG_API_URL` lists one reader, then two. `--clients`
   clients, each in its own session linked to the index, post gold questions
   (`backend: extractive`) for `--seconds` per phase. Prints answers/s,
   p50/p95 and errors per phase.

Numbers only; nothing here asserts.
"""

from __future__ import annotations

import argparse
import http.client
import json
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from eval.corpora import known_corpora, load_gold
from testkit.replicas import Replica, base_env, call_json, free_port, replicas, wait_ready
from testkit.seaweed import READER, WRITER, S3Server, seaweed

log = logging.getLogger("eval.bench_scale")
DEFAULT_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "eval-data"


def percentiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {"n": 0}
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
    return {"n": len(values), "p50_ms": round(statistics.median(ordered) * 1000, 1), "p95_ms": round(p95 * 1000, 1)}


def copy_store(local: Path, s3: S3Server, prefix: str) -> None:
    """The same tables, byte for byte, under s3://bucket/prefix."""
    from pyarrow import fs

    remote = fs.S3FileSystem(access_key=WRITER.access_key, secret_key=WRITER.secret_key,
                             endpoint_override=s3.endpoint, scheme="http", region="us-east-1")
    fs.copy_files(str(local), f"{s3.bucket}/{prefix}", source_filesystem=fs.LocalFileSystem(),
                  destination_filesystem=remote)


def first_stage(settings: Any, embedder: Any, index: str, queries: list[str], repeat: int) -> dict[str, float]:
    from rag_system.retrieval.engine import RetrievalEngine

    engine = RetrievalEngine(settings, embedder)
    options = engine.options(rerank=False)
    for query in queries[:3]:  # open the tables and warm the caches
        engine.retrieve(index, query, options)
    times = []
    for _ in range(repeat):
        for query in queries:
            t0 = time.perf_counter()
            engine.retrieve(index, query, options)
            times.append(time.perf_counter() - t0)
    return percentiles(times)


# -- the gateway ---------------------------------------------------------------------------
def _call(port: int, method: str, path: str, body: Any = None, timeout: float = 300) -> tuple[int, Any]:
    return call_json(port, method, path, body, timeout)


@contextmanager
def gateway(data_dir: Path, port: int, readers: list[Replica], log_path: Path) -> Iterator[None]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DOCENT_", "RAG_", "GATEWAY_"))}
    env.update({"DOCENT_DATA_DIR": str(data_dir), "RAG_API_URL": ",".join(r.url for r in readers),
                "RAG_WRITER_URL": readers[0].url, "DOCENT_LOG_LEVEL": "WARNING"})
    with open(log_path, "ab") as out:
        proc = subprocess.Popen([sys.executable, "-m", "backend", "--port", str(port)], env=env, stdout=out,
                                stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if _call(port, "GET", "/health", timeout=5)[0] == 200:
                    break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"the gateway did not start; see {log_path}")
            time.sleep(0.3)
        yield
    finally:
        proc.terminate()
        proc.wait(30)


def throughput(port: int, index_id: str, queries: list[str], clients: int, seconds: float) -> dict[str, Any]:
    sessions = []
    for i in range(clients):
        _, body = _call(port, "POST", "/sessions", {"title": f"bench {i}"})
        sid = body["session_id"]
        _call(port, "POST", f"/sessions/{sid}/indexes/{index_id}")
        sessions.append(sid)
    latencies: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()
    end = time.monotonic() + seconds

    def client(number: int) -> None:
        sent = 0
        while time.monotonic() < end:
            query = queries[(number * 5 + sent) % len(queries)]
            sent += 1
            t0 = time.perf_counter()
            try:
                status, body = _call(port, "POST", f"/sessions/{sessions[number]}/messages",
                                     {"message": query, "backend": "extractive"})
            except (OSError, http.client.HTTPException) as exc:
                status, body = 0, str(exc)
            with lock:
                if status == 200:
                    latencies.append(time.perf_counter() - t0)
                else:
                    errors.append(f"{status}: {str(body)[:200]}")

    started = time.monotonic()
    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - started
    return {"answers_per_s": round(len(latencies) / elapsed, 2), **percentiles(latencies),
            "errors": len(errors), "first_errors": errors[:3]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval.bench_scale", description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--corpus", default="docs")
    parser.add_argument("--repeat", type=int, default=3, help="passes over the gold queries per store")
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=30.0, help="per throughput phase")
    parser.add_argument("--skip-throughput", action="store_true")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    corpus = known_corpora(args.data_dir)[args.corpus]
    queries = [row.query for row in load_gold(corpus.gold)]

    from backend.store import Store
    from rag_system.config import load_settings
    from rag_system.indexing.builder import build_index
    from rag_system.embedding.minilm import MiniLMEmbedder

    report: dict[str, Any] = {"corpus": args.corpus, "queries": len(queries), "clients": args.clients}
    with tempfile.TemporaryDirectory(prefix="docent-bench-scale-") as tmp, seaweed(Path(tmp) / "s3") as s3:
        root = Path(tmp)
        gw_dir = root / "gateway"
        gw_dir.mkdir()
        # The gateway's index record first: the RAG API's index is named by its id.
        store = Store(gw_dir / "docent.db")
        index_id = store.create_index(f"bench {args.corpus}", "", {"status": "ready"})["id"]
        store.close()

        base = {"DOCENT_DATA_DIR": str(root / "local"), "OLLAMA_HOST": "http://127.0.0.1:9",
                "LLM_PRELOAD": "false"}
        local = load_settings(environ=base, dotenv_path=None)
        embedder = MiniLMEmbedder(threads=0)
        t0 = time.perf_counter()
        summary = build_index(list(corpus.sources), index_id, local, embedder=embedder)
        report["build"] = {"chunks": summary.index_chunks, "seconds": round(time.perf_counter() - t0, 1)}
        copy_store(Path(local.resolved_lancedb_uri), s3, "bench")
        uri = s3.uri("bench")
        s3_env = {**base, "LANCEDB_URI": uri, **s3.env(READER), "DOCENT_KEEP_VERSIONS_S": "3600"}
        report["first_stage"] = {
            "local": first_stage(local, embedder, index_id, queries, args.repeat),
            "s3_consistency_5s": first_stage(load_settings(environ={**s3_env, "DOCENT_READ_CONSISTENCY_S": "5"},
                                                           dotenv_path=None), embedder, index_id, queries,
                                             args.repeat),
            "s3_consistency_0": first_stage(load_settings(environ={**s3_env, "DOCENT_READ_CONSISTENCY_S": "0"},
                                                          dotenv_path=None), embedder, index_id, queries,
                                            args.repeat),
        }
        print(json.dumps(report, indent=1), flush=True)
        if args.skip_throughput:
            return 0
        del embedder

        gw_port = free_port()
        envs = [{**base_env(root / f"reader{i}"), "LANCEDB_URI": uri, **s3.env(READER), "DOCENT_ROLE": "reader",
                 "DOCENT_READ_CONSISTENCY_S": "5", "DOCENT_GATEWAY_URL": f"http://127.0.0.1:{gw_port}"}
                for i in range(2)]
        report["throughput"] = {}
        with replicas(envs, root / "logs") as readers:
            for reader in readers:
                wait_ready(reader)
                # One chat each first, so neither phase pays a replica's table opening.
                reader.call("POST", "/chat", {"query": queries[0], "index": index_id, "backend": "extractive"})
            for count in (1, 2):
                with gateway(gw_dir, gw_port, readers[:count], root / "logs" / "gateway.log"):
                    phase = throughput(gw_port, index_id, queries, args.clients, args.seconds)
                report["throughput"][f"{count}_reader{'s' if count > 1 else ''}"] = phase
                print(json.dumps({f"{count} reader(s)": phase}), flush=True)
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
