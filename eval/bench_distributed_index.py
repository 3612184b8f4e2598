"""Distributed index builds: `python -m eval.bench_distributed_index --data-dir ../shared/eval-data [--store s3] [--inputs s3] [--json]`.

Builds the localGPT corpora (or `--docs FOLDER`) once per arm: the single-process
`build_index`, then `build_index_distributed` on a local Ray cluster of 1, 2 and 4
workers (`--workers 1,2,4`), each worker one CPU and one compute thread. Each arm
runs in a process of its own, so `driver_peak_rss_mb` is that arm's driver alone
(for the single process: the whole build, model included), and starts warm: it
first builds the acquisition corpus into a throwaway index, which loads the
model in the process or in every worker and builds Docling's converter, then
times the real build from a fresh index.

Per arm: chunks/s over the whole build; the phases from the build's own events
and timings (`plan_s` to `build_started`, `work_s` until the last file is
embedded or failed, `commit_s`, `fts_s`, `ann_s`); the workers' summed
convert/embed/write seconds; the workers' resident memory at the end. Then the
top 10 of the gold questions on each arm's index against the single process's
(`top10_same`: the share with exactly the same chunks in the same order;
`overlap10`: the mean share of common chunks). The written throughput model is
in Documentation/scale-out.md ("Distributed builds (Ray)").

`--store s3` runs the same arms onto an S3-compatible store instead of a local
folder, because that is where a cluster's workers must write in production:
every fragment write, the commit's conditional put and the full-text index go
through the object store's protocol rather than the file system. The bench
starts its own SeaweedFS server on loopback (testkit/seaweed.py, the one the
scale-out tests use) and gives each arm a prefix of its own; an arm's process
gets the store's `LANCEDB_URI` and AWS_* variables, and its Ray workers the
storage options its settings send with every task, as in a real deployment.
Loopback has no network latency, so this measures the protocol's cost, not a
remote bucket's round trips.

`--inputs s3` reads the documents from that server too: the bench uploads each
source folder under `inputs/<folder>/` and every arm indexes the `s3://`
prefixes (rag_system/indexing/objects.py: the driver lists and hashes the
objects, whoever converts a file fetches it), as a cluster without a shared file
system must. With `--store local` the server then holds only the inputs.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from eval.corpora import build_sources

if TYPE_CHECKING:
    from testkit.seaweed import S3Server

GOLD = ("rfc.jsonl", "docs.jsonl", "acquisition.jsonl")
QUESTIONS_PER_SET = 8


def _sources(args: argparse.Namespace) -> list[Path]:
    return build_sources(args.data_dir, args.docs)


def _upload(server: S3Server, sources: list[Path]) -> list[str]:
    """Each source folder's files under `inputs/<folder name>/` on the server, a source file as
    `inputs/<file name>`; the prefixes' and objects' URIs."""
    from rag_system.config import load_settings
    from rag_system.indexing.objects import filesystem

    system = filesystem(load_settings(environ=server.env(), dotenv_path=None))  # as the arms will read them
    uris = []
    for source in sources:
        prefix = f"inputs/{source.name}"
        files = [source] if source.is_file() else sorted(p for p in source.rglob("*") if p.is_file())
        for path in files:
            key = prefix if path == source else f"{prefix}/{path.relative_to(source).as_posix()}"
            with system.open_output_stream(f"{server.bucket}/{key}") as out:
                out.write(path.read_bytes())
        uris.append(server.uri(prefix))
    return uris


def _arm(spec: str, sources: list[Path | str], warm: Path, data: Path) -> dict[str, Any]:
    """One arm in this process: `single`, or `local:N`; the figures of its timed build."""
    from rag_system.config import load_settings
    from rag_system.indexing.builder import build_index
    from rag_system.indexing.events import BuildEvent

    settings = load_settings().with_overrides(data_dir=str(data))
    marks: dict[str, float] = {}
    t0 = 0.0

    def mark(event: BuildEvent) -> None:
        now = time.perf_counter() - t0
        if event.type == "build_started":
            marks["plan"] = now
        elif event.type in ("file_embedded", "file_failed"):
            marks["work"] = now

    out: dict[str, Any] = {"arm": spec}
    if spec == "single":
        build_index([warm], "warm", settings)
        t0 = time.perf_counter()
        summary = build_index(sources, "bench", settings, on_event=mark)
        wall = time.perf_counter() - t0
    else:
        from rag_system.indexing.distributed import build_index_distributed, ray_cluster

        c0 = time.perf_counter()
        with ray_cluster(spec):
            out["cluster_start_s"] = round(time.perf_counter() - c0, 2)
            build_index_distributed([warm], "warm", settings)
            t0 = time.perf_counter()
            summary = build_index_distributed(sources, "bench", settings, on_event=mark)
            wall = time.perf_counter() - t0
            out["workers_rss_mb"] = _workers_rss_mb()
    timings = summary.timings
    work_end = marks.get("work", marks.get("plan", 0.0))
    out.update({
        "files": summary.added, "failed": len(summary.failed), "chunks": summary.chunks, "seconds": round(wall, 2),
        "chunks_per_s": round(summary.chunks / wall, 2) if wall else 0.0,
        "plan_s": round(marks.get("plan", 0.0), 2), "work_s": round(work_end - marks.get("plan", 0.0), 2),
        "commit_s": round(timings.get("commit", 0.0), 3), "fts_s": round(timings.get("fts", 0.0), 2),
        "ann_s": round(timings.get("ann", 0.0), 2),
        "worker_seconds": {k: round(timings.get(k, 0.0), 2) for k in ("convert", "embed", "write")},
        "driver_peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    })
    return out


def _workers_rss_mb() -> float:
    """Resident memory of this cluster's Ray worker processes (the ones that ran tasks hold the model):
    the `ray::` processes descended from this driver, which started the local cluster, so another
    cluster on the same machine (a test run beside the bench) is not counted."""
    total = 0
    for entry in Path("/proc").iterdir():
        try:
            title = (entry / "cmdline").read_bytes().split(b"\0")[0].decode(errors="replace")
            if entry.name.isdigit() and title.startswith("ray::") and "Agent" not in title \
                    and _descends_from(int(entry.name), os.getpid()):
                status = (entry / "status").read_text()
                total += int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmRSS:")))
        except (OSError, StopIteration, ValueError):
            continue
    return round(total / 1024, 1)


def _descends_from(pid: int, ancestor: int) -> bool:
    while pid > 1:
        if pid == ancestor:
            return True
        status = Path(f"/proc/{pid}/status").read_text()
        pid = int(next(line.split()[1] for line in status.splitlines() if line.startswith("PPid:")))
    return False


def _questions(data_dir: Path) -> list[str]:
    gold = data_dir / "localgpt" / "goldset"
    out: list[str] = []
    for name in GOLD:
        path = gold / name
        if path.exists():
            lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
            out.extend(str(q["query"]) for q in lines[:QUESTIONS_PER_SET])
    return out


def _agreement(arms: list[dict[str, Any]], roots: dict[str, Path], envs: dict[str, dict[str, str]],
               questions: list[str]) -> None:
    """Each arm's top 10 against the single process's, for the gold questions (in place, on the arms).

    Each arm's index is read where it was built: its folder, or its prefix on the store (`envs`)."""
    from rag_system.config import load_settings
    from rag_system.embedding.registry import shared_embedder
    from rag_system.retrieval.engine import RetrievalEngine

    tops: dict[str, list[list[str]]] = {}
    for arm in arms:
        settings = load_settings(environ={**os.environ, **envs[arm["arm"]]}).with_overrides(
            data_dir=str(roots[arm["arm"]]))
        engine = RetrievalEngine(settings, shared_embedder(settings))
        tops[arm["arm"]] = [[c.chunk_id for c in engine.retrieve("bench", q, engine.options(k=10)).candidates]
                            for q in questions]
    base = tops.get("single")
    for arm in arms:
        if base is None or not questions:
            continue
        mine = tops[arm["arm"]]
        arm["top10_same"] = round(sum(a == b for a, b in zip(base, mine)) / len(questions), 3)
        arm["overlap10"] = round(sum(len(set(a) & set(b)) / max(len(a), 1) for a, b in zip(base, mine))
                                 / len(questions), 3)


def _model(arms: list[dict[str, Any]]) -> dict[str, Any]:
    """The throughput model's inputs from the 1-worker arm: T(N) = plan + chunks / (N r) + commit + fts."""
    one = next((a for a in arms if a["arm"] == "local:1"), None)
    if one is None or not one["work_s"]:
        return {}
    rate = one["chunks"] / one["work_s"]
    serial = one["plan_s"] + one["commit_s"] + one["fts_s"] + one["ann_s"]
    predicted = {}
    for arm in arms:
        if arm["arm"].startswith("local:"):
            n = int(arm["arm"].split(":")[1])
            seconds = serial + arm["chunks"] / (n * rate)
            predicted[arm["arm"]] = {"seconds": round(seconds, 1), "chunks_per_s": round(arm["chunks"] / seconds, 2)}
    return {"per_worker_chunks_per_s": round(rate, 2), "serial_s": round(serial, 2), "predicted": predicted}


@contextmanager
def _store(kind: str, workdir: Path) -> Iterator[S3Server | None]:
    """None for `local`; for `s3`, a SeaweedFS server under `workdir` until the block ends."""
    if kind == "local":
        yield None
        return
    from testkit.seaweed import SeaweedError, seaweed

    try:
        with seaweed(workdir) as server:
            yield server
    except SeaweedError as exc:
        raise SystemExit(f"--store s3 needs a SeaweedFS server: {exc}") from None


def _arm_env(server: S3Server | None, spec: str, store: bool = True) -> dict[str, str]:
    """What an arm's process adds to this one's environment: nothing locally, its credentials on S3 and,
    when the store is there (`store`), its own prefix."""
    if server is None:
        return {}
    return {**({"LANCEDB_URI": server.uri(f"bench-{spec.replace(':', '-')}")} if store else {}), **server.env()}


def run(args: argparse.Namespace) -> dict[str, Any]:
    sources = _sources(args)
    missing = [str(s) for s in sources if not s.exists()]
    warm = args.data_dir / "localgpt" / "corpora" / "acquisition"
    if missing or not warm.exists():
        raise SystemExit(f"missing data: {', '.join(missing or [str(warm)])}")
    specs = ["single", *(f"local:{n}" for n in args.workers)]
    arms: list[dict[str, Any]] = []
    needs_server = "s3" if "s3" in (args.store, args.inputs) else "local"
    with (tempfile.TemporaryDirectory(prefix="docent-bench-ray-") as tmp,
          _store(needs_server, Path(tmp) / "seaweed") as server):
        roots = {spec: Path(tmp) / spec.replace(":", "_") for spec in specs}
        envs = {spec: _arm_env(server, spec, store=args.store == "s3") for spec in specs}
        inputs = [] if args.inputs == "local" or server is None else _upload(server, sources)
        for spec in specs:
            command = [sys.executable, "-m", "eval.bench_distributed_index", "--arm", spec,
                       "--arm-data", str(roots[spec]), "--data-dir", str(args.data_dir),
                       *(["--docs", str(args.docs)] if args.docs else []),
                       *(a for uri in inputs for a in ("--arm-input", uri))]
            done = subprocess.run(command, capture_output=True, text=True, check=False,
                                  env={**os.environ, **envs[spec]})
            if done.returncode != 0:
                raise SystemExit(f"arm {spec} failed:\n{done.stderr[-4000:]}")
            arms.append(json.loads(done.stdout.strip().splitlines()[-1]))
            sys.stderr.write(f"{spec}: {arms[-1]['seconds']} s, {arms[-1]['chunks_per_s']} chunks/s\n")
        _agreement(arms, roots, envs, _questions(args.data_dir))
    return {"sources": [str(s) for s in sources], "store": args.store, "inputs": args.inputs, "cpus": os.cpu_count(),
            "load_average": os.getloadavg(), "arms": arms, "model": _model(arms)}


def _table(result: dict[str, Any]) -> str:
    lines = ["| arm | chunks | s | chunks/s | plan s | work s | commit s | FTS s | driver peak MB | workers MB |"
             " top10 same |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for a in result["arms"]:
        lines.append(f"| {a['arm']} | {a['chunks']} | {a['seconds']} | {a['chunks_per_s']} | {a['plan_s']} | "
                     f"{a['work_s']} | {a['commit_s']} | {a['fts_s']} | {a['driver_peak_rss_mb']} | "
                     f"{a.get('workers_rss_mb', '-')} | {a.get('top10_same', '-')} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m eval.bench_distributed_index", description=__doc__.split("\n")[0])
    p.add_argument("--data-dir", type=Path, default=Path("../shared/eval-data"))
    p.add_argument("--docs", type=Path, help="benchmark your own folder instead of the localGPT corpora")
    p.add_argument("--workers", type=lambda s: [int(n) for n in s.split(",")], default=[1, 2, 4],
                   help="local worker counts to time (default 1,2,4)")
    p.add_argument("--store", choices=("local", "s3"), default="local",
                   help="where the arms build: a local folder (default) or a SeaweedFS S3 server the bench starts")
    p.add_argument("--inputs", choices=("local", "s3"), default="local",
                   help="where the documents are read from: their folders (default) or s3:// prefixes on that server")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.add_argument("--arm", help=argparse.SUPPRESS)  # internal: run one arm in this process
    p.add_argument("--arm-data", type=Path, help=argparse.SUPPRESS)
    p.add_argument("--arm-input", action="append", default=[], help=argparse.SUPPRESS)  # an arm's s3:// inputs
    args = p.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.arm:
        inputs: list[Path | str] = [*args.arm_input] or [*_sources(args)]
        sys.stdout.write(json.dumps(_arm(args.arm, inputs, args.data_dir / "localgpt" / "corpora" /
                                         "acquisition", args.arm_data)) + "\n")
        return 0
    result = run(args)
    sys.stdout.write((json.dumps(result, indent=2) if args.json else
                      f"store: {result['store']}, inputs: {result['inputs']}\n{_table(result)}\n{json.dumps(result['model'], indent=2)}") + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
