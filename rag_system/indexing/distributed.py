"""Index builds fanned out on Ray: workers write Lance fragments, the driver commits them once.

Why: one process parses, embeds and writes, so a build is bound to one machine's
cores (the million-chunk build took 2,405 s on one box, Documentation/scale-out.md).
Here the driver plans exactly as `build_index` does (`plan_build`: the same
discovery, hashes, manifest comparison and embedder choice), sends the files to
process to Ray tasks in contiguous groups (`ray_tasks.run_task`: each converts,
chunks and embeds its files and writes their rows as uncommitted fragments of
the chunk table and its window and window-vector tables), and once every task
has finished it:

1. deletes the rows the new ones replace (the files' previous content, and any
   rows a crashed single-process build left of the new) and the rows of removed files,
2. commits each table's fragments in ONE `LanceOperation.Append` (side tables, then chunks),
3. records every processed file in the manifest in one commit,
4. refreshes the full-text and ANN indexes (`finish_build`, as `build_index`).

Crash safety: until step 1 nothing in the store has changed, so a failed task, a
killed worker, a cancel or a dead driver leaves the index as it was, and running
again redoes the work. A crash inside steps 1-3 is repaired like a crashed
single-process build: a file whose manifest row is missing or stale is processed
again, and its stale rows are deleted first. Unlike `build_index`, a reader sees an
updated document disappear for the moment between steps 1 and 2 (a first cut:
the delete is not folded into the commit), and sees new files all at once, not
one by one.

Fragments are committed in the plan's file order, so a fresh index holds its rows
in the same order as a single-process build's. Ray is imported only here and in
`ray_cluster`, so nothing else pays for it.
"""

from __future__ import annotations

import logging
import os
import threading
import time
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rag_system.config import Settings
from rag_system.embedding.base import Embedder
from rag_system.indexing.build_progress import BuildProgress
from rag_system.indexing.builder import BuildCancelled, BuildSetup, finish_build, plan_build, remove_gone
from rag_system.indexing.events import BuildEvent, BuildSummary, EventSink, ignore_event
from rag_system.indexing.group_writer import holds_any, stale_ids
from rag_system.indexing.ray_tasks import (CHUNKS, COMMIT_ORDER, VECTORS, WINDOWS, FileJob, TableTarget,
                                           TaskResult, TaskSpec, embedder_settings, run_task)

log = logging.getLogger(__name__)

#: Tasks per worker: enough that a worker that drew small files takes more, few enough that each task's
#: fragments stay large and the embedder's batches full.
TASKS_PER_WORKER = 4
#: How often the driver looks at `cancel` while it waits for tasks.
POLL_S = 0.2
#: The object store of a local cluster: tasks return fragment metadata and events, never rows.
LOCAL_OBJECT_STORE_BYTES = 128 * 2**20


class DistributedBuildError(RuntimeError):
    """A task failed or a worker died; nothing was committed, and running the build again finishes it."""


@dataclass(frozen=True)
class Workers:
    """Where tasks run: a local cluster of `cpus` CPUs, or an existing cluster at `address`."""

    address: str | None = None
    cpus: int = 0


def parse_workers(spec: str) -> Workers:
    """`local:N` (a Ray cluster on this machine with N CPUs) or `ray://host:port` (an existing cluster)."""
    text = spec.strip()
    if text.startswith("local:"):
        count = text[len("local:"):]
        if not count.isdigit() or int(count) < 1:
            raise ValueError(f"--workers {spec!r}: local:N needs a whole number of workers, at least 1")
        return Workers(cpus=int(count))
    if text.startswith("ray://") and len(text) > len("ray://"):
        return Workers(address=text)
    raise ValueError(f"--workers {spec!r}: use local:N (N workers on this machine) or ray://host:port")


def split_work(sizes: Sequence[int], parts: int) -> list[range]:
    """Consecutive runs of items (ranges of positions) of about equal total size, at most `parts` of them.

    Consecutive so the commit keeps the plan's order; by size because a file's bytes are the best
    estimate of its chunks before it is read. Every range is non-empty.
    """
    if not sizes:
        return []
    parts = max(1, min(parts, len(sizes)))
    total = sum(max(s, 1) for s in sizes)
    ranges: list[range] = []
    start, filled = 0, 0
    for i, size in enumerate(sizes):
        filled += max(size, 1)
        left_items, left_parts = len(sizes) - i - 1, parts - len(ranges) - 1
        # Close a range once it holds its share, or when each remaining part needs one of the remaining items.
        if left_parts > 0 and (filled >= total * (len(ranges) + 1) / parts or left_items == left_parts):
            ranges.append(range(start, i + 1))
            start = i + 1
    ranges.append(range(start, len(sizes)))
    return [r for r in ranges if len(r)]


@contextmanager
def ray_cluster(spec: str) -> Iterator[Workers]:
    """Connect to the workers `spec` names (`parse_workers`) for the block, and disconnect after.

    A local cluster is started with its dashboard off and Ray's logging quiet, and stopped at the end.
    Workers on this machine import this checkout (PYTHONPATH) and stay offline like the driver.
    An already connected process (a test's cluster) is used as it is and left connected.
    """
    import ray

    workers = parse_workers(spec)
    if ray.is_initialized():
        yield workers
        return
    env = {k: os.environ[k] for k in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE") if k in os.environ}
    with warnings.catch_warnings():
        # Ray starts its processes with fork+exec; LanceDB and Lance warn about any fork of a process that
        # loaded them, though an exec'd child shares none of their state.
        warnings.filterwarnings("ignore", message=".*fork", category=RuntimeWarning)
        warnings.filterwarnings("ignore", message=".*fork", category=UserWarning)
        if workers.address is not None:
            _join(ray, workers.address, env)
        else:
            # A local cluster makes and uses its own token; Ray's notice about it is not the user's business.
            logging.getLogger("ray._private.authentication").setLevel(logging.ERROR)
            root = str(Path(__file__).resolve().parents[2])
            env["PYTHONPATH"] = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p)
            ray.init(num_cpus=workers.cpus, include_dashboard=False, logging_level=logging.WARNING,
                     log_to_driver=False, object_store_memory=LOCAL_OBJECT_STORE_BYTES,
                     runtime_env={"env_vars": env})
    try:
        yield workers
    finally:
        ray.shutdown()


def _join(ray: Any, address: str, env: dict[str, str]) -> None:
    """Join the cluster at `address` over Ray Client; a failed connection says what to check.

    Ray Client answers a refused token the way it answers a closed port: it retries for ~30 s, then raises
    "ray client connection timeout", so the message names both causes."""
    try:
        ray.init(address=address, runtime_env={"env_vars": env}, logging_level=logging.WARNING,
                 log_to_driver=False)
    except BaseException as exc:
        # A failed Ray Client connection leaves its state behind: without a shutdown, this process could
        # start no local cluster afterwards (Ray asserts in `init`).
        ray.shutdown()
        if not isinstance(exc, ConnectionError):
            raise
        raise ConnectionError(
            f"could not join the Ray cluster at {address} ({exc}): check that its Ray Client server listens "
            "there (ray start --head --ray-client-server-port), and, for a cluster with token authentication, "
            "that RAY_AUTH_MODE=token and its token (RAY_AUTH_TOKEN or RAY_AUTH_TOKEN_PATH) are set here") from exc


def build_index_distributed(
    inputs: Sequence[Path | str],
    index: str,
    settings: Settings,
    *,
    embedder: Embedder | None = None,
    embedder_name: str | None = None,
    on_event: EventSink = ignore_event,
    cancel: threading.Event | None = None,
    cpus_per_task: int = 1,
    tasks_per_worker: int = TASKS_PER_WORKER,
    max_retries: int = 0,
    hold: frozenset[Path] = frozenset(),
    settle_s: float = 0.0,
    remove: Sequence[str] = (),
) -> BuildSummary:
    """Bring `index` in line with the files under `inputs` on the connected Ray cluster (`ray_cluster`).

    The same result as `build_index`; each task takes `cpus_per_task` CPUs and embeds with as many
    threads. `max_retries`: how often Ray reruns a task whose worker died (a rerun writes new fragments;
    the dead attempt's are never committed). A cancel (`cancel` set) or a failed task raises
    (`BuildCancelled`, `DistributedBuildError`) with nothing committed. `hold`, `settle_s` and `remove`
    mean what they mean to `build_index`. `embedder`: an instance the driver may plan with (the RAG API's,
    so the driver loads no second one) when it is the index's; the workers always load their own.
    """
    import ray

    if not ray.is_initialized():
        raise RuntimeError("no Ray cluster: connect first (rag_system.indexing.distributed.ray_cluster)")
    on_event = BuildProgress().sink(on_event)
    setup = plan_build(inputs, index, settings, on_event, embedder=embedder, embedder_name=embedder_name, hold=hold,
                       settle_s=settle_s, remove=remove)
    work = setup.plan.to_process
    timings: dict[str, float] = {"convert": 0.0, "embed": 0.0, "write": 0.0}
    jobs = [FileJob(source, previous, setup.stamps.get(source.key)) for source, previous in work]
    results: list[TaskResult] = []
    if jobs:
        cpus = ray.cluster_resources().get("CPU", 1)  # type: ignore[no-untyped-call]
        workers = max(1, int(cpus // max(cpus_per_task, 1)))
        ranges = split_work([job.source.size for job in jobs], workers * max(tasks_per_worker, 1))
        spec = _spec(setup, cpus_per_task)
        remote = ray.remote(run_task).options(num_cpus=cpus_per_task, max_retries=max_retries,
                                              name="docent_build_task")
        spec_ref = ray.put(spec)
        refs = [remote.remote(spec_ref, i, [jobs[j] for j in r]) for i, r in enumerate(ranges)]
        log.info("index %s: %d files in %d tasks on %d workers", index, len(jobs), len(refs), workers)
        results = _gather(ray, refs, cancel, on_event, index)
        for result in results:
            for key, seconds in result.timings.items():
                timings[key] = timings.get(key, 0.0) + seconds
    if cancel is not None and cancel.is_set():
        raise BuildCancelled(f"build of {index!r} cancelled; nothing was committed")
    remove_gone(setup, on_event)
    t0 = time.perf_counter()
    _commit(setup, jobs, results, on_event)
    timings["commit"] = time.perf_counter() - t0
    return finish_build(setup, timings, on_event)


def _spec(setup: BuildSetup, cpus_per_task: int) -> TaskSpec:
    """The tables' locations and schemas, and the embedder's settings, as every task needs them."""
    table = setup.table
    handles = {CHUNKS: table.table}
    if table.windows is not None:
        handles[WINDOWS] = table.windows.table
    if table.vectors is not None:
        handles[VECTORS] = table.vectors.table
    targets = []
    for name, handle in handles.items():
        dataset = handle.to_lance()
        targets.append(TableTarget(name, dataset.uri, handle.schema, dataset.data_storage_version))
    settings = embedder_settings(setup.settings, setup.embedder.name, cpus_per_task)
    return TaskSpec(settings, setup.embedder.identity, setup.options, tuple(targets),
                    setup.settings.storage_options or None)


def _gather(ray: Any, refs: list[Any], cancel: threading.Event | None, on_event: EventSink,
            index: str) -> list[TaskResult]:
    """Every task's result in task order; their events are passed on as each task finishes.

    On a cancel or a failed task the tasks still running are cancelled and the error raised.
    """
    pending = list(refs)
    results: dict[int, TaskResult] = {}
    try:
        while pending:
            if cancel is not None and cancel.is_set():
                raise BuildCancelled(f"build of {index!r} cancelled after {len(results)} of {len(refs)} tasks; "
                                     "nothing was committed")
            done, pending = ray.wait(pending, num_returns=1, timeout=POLL_S)
            for ref in done:
                try:
                    result: TaskResult = ray.get(ref)
                except (ray.exceptions.RayError, OSError) as exc:
                    raise DistributedBuildError(
                        f"a task of the build of {index!r} failed ({type(exc).__name__}: {_first_line(exc)}); "
                        "nothing was committed: run the build again to finish it") from exc
                results[result.task] = result
                for event in result.events:
                    on_event(event)
    except BaseException:
        for ref in pending:
            ray.cancel(ref)
        raise
    return [results[i] for i in sorted(results)]


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[-1] if text else ""


def _commit(setup: BuildSetup, jobs: Sequence[FileJob], results: Sequence[TaskResult],
            on_event: EventSink) -> None:
    """Replace the stale rows, commit every table's fragments once (side tables first), then the manifest."""
    import lance

    by_path = {job.source.key: job for job in jobs}
    written = [o for r in results for o in r.outcomes if o.status in ("added", "updated")]
    stale = sorted({i for o in written for i in stale_ids(by_path[o.path], setup.records)})
    table = setup.table
    if holds_any(table, stale):
        table.delete_documents(stale)
    storage = setup.settings.storage_options or None
    handles = {CHUNKS: table.table, WINDOWS: table.windows.table if table.windows else None,
               VECTORS: table.vectors.table if table.vectors else None}
    counts: dict[str, int] = {}
    for name in COMMIT_ORDER:
        fragments = [f for r in results for f in r.fragments.get(name, [])]
        handle = handles[name]
        if not fragments or handle is None:
            continue
        uri = handle.to_lance().uri
        version = lance.dataset(uri, storage_options=storage).version
        lance.LanceDataset.commit(uri, lance.LanceOperation.Append(fragments), read_version=version,
                                  storage_options=storage)
        counts[name] = len(fragments)
    table.checkout_latest()
    setup.manifest.upsert_all([record for r in results for record in r.records])
    if counts:
        on_event(BuildEvent("build_committed", data={"fragments": counts, "tasks": len(results),
                                                     "workers": len({r.worker for r in results})}))
    for result in results:
        for outcome in result.outcomes:
            _count(setup.summary, outcome, on_event)


def _count(summary: BuildSummary, outcome: Any, on_event: EventSink) -> None:
    """Fold one file's outcome into the summary; a written file is reported once it is committed."""
    if outcome.status == "held":
        summary.held.append(outcome.path)
        return
    if outcome.status == "failed":
        summary.failed.append({"path": outcome.path, "reason": outcome.reason or "unknown error"})
        return
    if outcome.status == "updated":
        summary.updated += 1
    else:
        summary.added += 1
    summary.chunks += outcome.chunks
    summary.pages += outcome.pages
    summary.ocr_pages += outcome.ocr_pages
    if outcome.ocr_engine and outcome.ocr_engine not in summary.ocr_engines:
        summary.ocr_engines.append(outcome.ocr_engine)
    on_event(BuildEvent("file_written", outcome.path, {"chunks": outcome.chunks, "pages": outcome.pages,
                                                       "status": outcome.status}))
