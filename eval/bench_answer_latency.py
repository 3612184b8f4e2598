"""How long a person waits for an answer: time to the sources, the first token and the whole answer.

    python -m eval.bench_answer_latency --data-dir ../shared/eval-data --corpus mixed --rows 24 --cli 5

Starts the RAG API as `make run` does (default backend, model loaded and
warmed at start-up) over the same cached index `eval.run_answers` uses, asks
`--rows` gold questions spread over the gold file through `/chat/stream`, and
reports p50/p95 of: time to the `sources` event, time to the first token,
time to `complete`, prompt tokens, and the `generation_started` estimate
against the real first token. Then `--cli` of those questions through
`python -m rag_system chat` (which answers through the running API): the
command's wall time minus the API's own `timings_ms.total_ms` is the CLI's
overhead. Timings depend on the machine's load, so the load average is
printed with them; tests never assert on them.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from eval.corpora import ALL, add_corpus_arguments, check_corpus_arguments, known_corpora, load_gold
from eval.metrics import percentile
from eval.run_eval import _index_name, _overrides
from testkit import REPO_ROOT
from testkit.client import read_events
from testkit.processes import RagApiProcess, free_port


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m eval.bench_answer_latency", description=__doc__.split("\n")[0])
    add_corpus_arguments(p, ALL)
    p.add_argument("--rows", type=int, default=24, help="gold questions, spread evenly over the file")
    p.add_argument("--cli", type=int, default=5, help="of those, how many to also ask through the CLI")
    p.add_argument("--backend", default=None, help="answering backend (default: the server's default)")
    args = p.parse_args(argv)
    check_corpus_arguments(p, args)
    return args


def _spread(rows: list[Any], n: int) -> list[Any]:
    if n >= len(rows):
        return rows
    return [rows[round(i * (len(rows) - 1) / max(n - 1, 1))] for i in range(n)]


def ask(api: RagApiProcess, body: dict[str, Any]) -> dict[str, Any]:
    """One streamed question; seconds from the request to each milestone."""
    t0 = time.perf_counter()
    request = urllib.request.Request(f"{api.url}/chat/stream", data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    resp = urllib.request.build_opener(urllib.request.ProxyHandler({})).open(request, timeout=900)
    marks: dict[str, Any] = {}
    for event, data in read_events(resp):
        now = time.perf_counter() - t0
        if event == "sources":
            marks.setdefault("sources_s", now)
        elif event == "generation_started":
            marks["estimated_s"] = data.get("estimated_s")
            marks["prompt_tokens"] = data.get("prompt_tokens")
            marks["generation_started_s"] = now
        elif event == "token":
            marks.setdefault("first_token_s", now)
        elif event in ("complete", "error"):
            marks["total_s"] = now
            marks["answer_source"] = data.get("answer_source", event)
            marks["api_total_ms"] = (data.get("timings_ms") or {}).get("total_ms")
            break
    resp.close()
    return marks


def wait_for_model(api: RagApiProcess, within_s: float) -> dict[str, Any]:
    """The API's model preload once it is settled (`/health` turns ready before the model has loaded
    and warmed, and a question asked then would time the load), or as it stands after `within_s`."""
    deadline = time.monotonic() + within_s
    while True:
        health = api.client.get("/health").json
        preload = ((health.get("components") or {}).get("llm") or {}).get("preload") or {}
        if preload.get("state") in ("loaded", "failed", "nothing to load") or time.monotonic() >= deadline:
            return preload
        time.sleep(1)


def cli_overhead(api: RagApiProcess, data_dir: Path, index: str, query: str) -> dict[str, float]:
    env = {**os.environ, "DOCENT_DATA_DIR": str(data_dir), "RAG_API_URL": api.url, "HF_HUB_OFFLINE": "1"}
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "rag_system", "chat", "--index", index, query, "--json"],
                          cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=900)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise RuntimeError(f"chat failed: {done.stderr[-500:]}")
    api_ms = json.loads(done.stdout)["timings_ms"].get("total_ms", 0.0)
    return {"wall_s": wall, "api_s": api_ms / 1000, "overhead_s": wall - api_ms / 1000}


def _stats(values: list[float]) -> dict[str, float | None]:
    values = [v for v in values if v is not None]
    if not values:
        return {"p50": None, "p95": None, "n": 0}
    return {"p50": round(percentile(values, 0.5), 2), "p95": round(percentile(values, 0.95), 2), "n": len(values)}


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from rag_system.config import Settings, load_settings
    from rag_system.indexing.builder import build_index

    settings = load_settings().with_overrides(data_dir=str(args.cache_dir), **_overrides(args.set))
    corpus = known_corpora(args.data_dir)[args.corpus]
    index = _index_name(corpus, settings)
    build_index(list(corpus.sources), index, settings)
    rows = _spread(load_gold(corpus.gold), args.rows)
    env = {"LLM_PRELOAD": "true", "LLM_BACKEND": args.backend or settings.llm_backend, "SEMANTIC_CACHE": "false"}
    names = {f.name: f.metadata["env"] for f in dataclasses.fields(Settings) if "env" in f.metadata}
    env.update({names.get(k, k.upper()): v for k, v in _overrides(args.set).items()})
    cache = Path(args.cache_dir).resolve()  # the server log stays beside the index, not in the tree
    api = RagApiProcess(cache, free_port(), "http://127.0.0.1:9", log_dir=cache, **env)
    api.start(wait_s=600)
    try:
        preload = wait_for_model(api, 600)
        asked = []
        for i, row in enumerate(rows, start=1):
            marks = ask(api, {"query": row.query, "indexes": [index], "query_decompose": False})
            asked.append({"id": row.id, **marks})
            sys.stderr.write(f"[{i}/{len(rows)}] {row.id} {marks.get('answer_source')} "
                             f"first token {marks.get('first_token_s') or 0:.1f}s total {marks['total_s']:.1f}s\n")
        cli = [cli_overhead(api, Path(args.cache_dir).resolve(), index, row.query) for row in rows[: args.cli]]
    finally:
        api.stop()
    load = os.getloadavg()
    summary = {
        "corpus": corpus.name, "rows": len(asked), "backend": env["LLM_BACKEND"], "preload": preload,
        "sources_s": _stats([a.get("sources_s") for a in asked]),
        "first_token_s": _stats([a.get("first_token_s") for a in asked]),
        "total_s": _stats([a["total_s"] for a in asked]),
        "prompt_tokens": _stats([a.get("prompt_tokens") for a in asked]),
        "estimate_error_s": _stats([abs(a["first_token_s"] - a["generation_started_s"] - a["estimated_s"])
                                    for a in asked if a.get("estimated_s") and a.get("first_token_s")]),
        "cli_overhead_s": _stats([c["overhead_s"] for c in cli]),
        "load_average": [round(x, 2) for x in load],
    }
    sys.stdout.write(json.dumps(summary, indent=2) + "\n")
    if args.json_out:
        args.json_out.write_text(json.dumps({"summary": summary, "rows": asked, "cli": cli}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
