"""Summaries and comparisons of the acquisition corpus through the API and the CLI, every citation checked.

    python -m eval.check_tasks --data-dir ../shared/eval-data [--backend extractive] [--paths api,cli]
                               [--sample N] [--json-out out.json]

Indexes `localgpt/corpora/acquisition/` once (in `--cache-dir`), then asks for
a summary of every document and comparisons of pairs plus one three-way and
one four-way comparison, over real HTTP (`POST /chat`, an in-process RAG API
on a free loopback port) and through `python -m rag_system summarize|compare
--json` in a subprocess. Each answer is judged by `eval.task_checks` against
the pages of the original PDFs. Prints one table; exit code 1 if any
citation failed.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from eval.task_checks import judge, page_texts

log = logging.getLogger("eval.check_tasks")
INDEX = "tasks_acquisition"
PAIRS = ((0, 1), (2, 3), (4, 5), (6, 7), (8, 9))
GROUPS = ((0, 6, 1), (3, 4, 5, 9))


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m eval.check_tasks", description=__doc__.split("\n")[0])
    p.add_argument("--data-dir", type=Path, default=Path("../shared/eval-data"))
    p.add_argument("--backend", choices=("auto", "llamacpp", "ollama", "openai", "extractive"), default="extractive")
    p.add_argument("--paths", default="api,cli", help="comma-separated: api, cli")
    p.add_argument("--sample", type=int, default=0, help="only the first N summaries and N comparisons")
    p.add_argument("--cache-dir", type=Path, default=Path("eval/.cache/tasks"))
    p.add_argument("--json-out", type=Path)
    p.add_argument("-v", "--verbose", action="store_true")
    return p.parse_args(argv)


def jobs(files: list[Path], sample: int) -> list[tuple[str, list[str]]]:
    """(task, document names): every summary, the pairs, a 3-way and a 4-way comparison."""
    names = [f.name for f in files]
    summaries = [("summary", [n]) for n in names]
    compares = [("compare", [names[i] for i in group]) for group in (*PAIRS, *GROUPS) if max(group) < len(names)]
    if sample:
        summaries, compares = summaries[:sample], compares[:sample]
    return summaries + compares


def via_api(settings: Any, work: list[tuple[str, list[str]]], backend: str) -> list[tuple[dict[str, Any], float]]:
    import http.client

    from rag_system.api.app import Service
    from rag_system.api.server import serve

    service = Service(settings)
    server = serve(service, "127.0.0.1", 0)
    server.serve_in_thread()
    out = []
    try:
        for task, names in work:
            body = json.dumps({"query": f"{task} of {' and '.join(names)}", "index": INDEX, "task": task,
                               "documents": names, "backend": backend}).encode()
            t0 = time.perf_counter()
            conn = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=3600)
            conn.request("POST", "/chat", body=body, headers={"Content-Type": "application/json"})
            resp = conn.getresponse()
            payload = json.loads(resp.read())
            conn.close()
            if resp.status != 200:
                raise RuntimeError(f"POST /chat {task} {names}: {resp.status} {payload}")
            out.append((payload, time.perf_counter() - t0))
    finally:
        server.shutdown()
        server.server_close()
        service.close()
    return out


def via_cli(data_dir: Path, work: list[tuple[str, list[str]]], backend: str) -> list[tuple[dict[str, Any], float]]:
    env = dict(os.environ, DOCENT_DATA_DIR=str(data_dir), HF_HUB_OFFLINE="1")
    out = []
    for task, names in work:
        command = "summarize" if task == "summary" else "compare"
        t0 = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "rag_system", command, *names, "--index", INDEX, "--json",
                               "--backend", backend], env=env, capture_output=True, text=True, timeout=3600)
        if done.returncode != 0:
            raise RuntimeError(f"CLI {command} {names}: exit {done.returncode}: {done.stderr[-500:]}")
        out.append((json.loads(done.stdout), time.perf_counter() - t0))
    return out


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, stream=sys.stderr)
    from rag_system.config import load_settings
    from rag_system.indexing.builder import build_index

    corpus = args.data_dir / "localgpt" / "corpora" / "acquisition"
    files = sorted(corpus.glob("*.pdf"))
    if not files:
        sys.stderr.write(f"error: no PDFs under {corpus}\n")
        return 2
    data_dir = args.cache_dir.resolve() / "data"
    settings = load_settings().with_overrides(data_dir=str(data_dir), llm_preload=False)
    build_index([corpus], INDEX, settings)
    pages = {f.name: page_texts(f) for f in files}
    work = jobs(files, args.sample)
    rows: list[dict[str, Any]] = []
    for path in [p.strip() for p in args.paths.split(",") if p.strip()]:
        results = via_api(settings, work, args.backend) if path == "api" else via_cli(data_dir, work, args.backend)
        for (task, names), (payload, seconds) in zip(work, results):
            verdict = judge(payload, pages)
            sources: dict[str, int] = {}
            for part in payload.get("parts", []):
                sources[part["source"]] = sources.get(part["source"], 0) + 1
            rows.append({"path": path, "task": task, "documents": names, "answer_source": payload["answer_source"],
                         "backend": payload.get("backend"), "seconds": round(seconds, 2), "sources": sources,
                         "notes": {p["key"]: p["note"] for p in payload.get("parts", []) if p.get("note")},
                         **verdict.to_json()})
    _print(rows)
    if args.json_out:
        args.json_out.write_text(json.dumps({"backend": args.backend, "rows": rows}, indent=2))
    return 0 if all(r["ok"] for r in rows) else 1


def _print(rows: list[dict[str, Any]]) -> None:
    out = sys.stdout
    out.write("| path | task | documents | source | parts (stated) | citations | valid | quote on page "
              "| extract sentences on page | s |\n")
    out.write("|---|---|---|---|---|---|---|---|---|---|\n")
    for r in rows:
        docs = ", ".join(d.split("_", 1)[-1].removesuffix(".pdf") for d in r["documents"])
        out.write(f"| {r['path']} | {r['task']} | {docs} | {r['answer_source']} | {r['parts']} ({r['stated']}) | "
                  f"{r['citations']} | {r['valid']} | {r['on_page']} | {r['claims_on_page']}/{r['claims']} | "
                  f"{r['seconds']} |\n")
        for problem in r["problems"]:
            out.write(f"|   | problem | {problem} | | | | | | | |\n")
    cites = sum(r["citations"] for r in rows)
    out.write(f"\n{len(rows)} answers, {cites} citations: {sum(r['valid'] for r in rows)} valid, "
              f"{sum(r['on_page'] for r in rows)} with the quote on the cited page; "
              f"{sum(r['claims_on_page'] for r in rows)} of {sum(r['claims'] for r in rows)} extracted sentences "
              "verbatim on their cited page; "
              f"{sum(r['stated'] for r in rows)} of {sum(r['parts'] for r in rows)} parts stated; "
              f"{'all ok' if all(r['ok'] for r in rows) else 'FAILURES'}\n")


if __name__ == "__main__":
    raise SystemExit(main())
