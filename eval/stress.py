"""Stress report: `python -m eval.stress --report [--sessions 50] [--messages 10] [--soak-s 600]`.

Starts a gateway and a RAG API (extractive backend, token configured) in a
temporary folder and runs, in order:

1. the bad-input corpus (`testkit.scenarios.badinput`) over every route of both services,
   the hostile files (`testkit.scenarios.hostile`) and the token/CORS checks (`testkit.scenarios.security`);
2. the data-integrity check: the seed data is unchanged, no file appeared
   outside the data directory, both processes are alive;
3. the faults (`testkit.scenarios.faults`, `testkit.scenarios.faults_storage`), each on its own stack
   except the LLM server killed mid-answer (a real llama.cpp server,
   `testkit.model_server`, that this stack's `openai` backend points at);
4. the load: `--sessions` users x `--messages` messages through the gateway
   while an index build runs, every message stored exactly once;
5. with `--soak-s`, a soak: `--soak-sessions` users chatting for that long;
6. the accounts probes (`testkit.scenarios.auth_probe`) on a stack of their own with accounts on:
   every route of both services without a login, with forged cookies, tokens and grants, without
   CSRF; broken bodies and query strings on every account route; a password storm; logins in parallel.
   `--auth-only` runs just this part.

`--report` prints the Markdown table of Documentation/reliability.md; without
it the figures are printed as JSON. The exit status is 1 when any promise
failed (a 5xx, a crash, an error under load, a fault not survived).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from testkit.model_server import ModelServer
from testkit.scenarios import faults, faults_storage
from testkit.scenarios.auth_probe import AuthProbeResult, run_auth_probes
from testkit.scenarios.badinput import build_corpus, run_corpus
from testkit.scenarios.hostile import HOSTILE_ENV, run_hostile
from testkit.scenarios.load_sessions import LoadResult, run_load
from testkit.scenarios.security import run_security
from testkit.stack import Stack, changed

log = logging.getLogger("eval.stress")


def _integrity(stack: Stack, baseline: dict[str, Any], outside: set[str]) -> dict[str, Any]:
    after = stack.snapshot()
    scratch = set(stack.seed.extra.values())  # valid probes may change these: not counted
    problems = changed(baseline, after, ignore=scratch)
    total = sum(1 for items in baseline.values() for key in items if key.split("/")[0] not in scratch)
    alive = stack.alive()
    extra = sorted(stack.outside_files() - outside)
    checks = total + len(alive) + 1
    failed = len(problems) + sum(not ok for ok in alive.values()) + (1 if extra else 0)
    return {"checks": checks, "passed": checks - failed, "problems": problems + [f"outside: {p}" for p in extra]
            + [f"{name} died" for name, ok in alive.items() if not ok]}


def _faults(root: Path, stack: Stack, server: ModelServer) -> list[dict[str, Any]]:
    runs = [("llm", lambda: faults.llm_dies_mid_answer(stack, server)),
            ("build", lambda: faults.rag_killed_during_build(root / "fault-build")),
            ("stream", lambda: faults.gateway_killed_during_stream(root / "fault-stream")),
            ("disk", lambda: faults_storage.disk_full(root / "fault-disk")),
            ("sqlite", lambda: faults_storage.sqlite_locked(root / "fault-sqlite"))]
    out: list[dict[str, Any]] = []
    for key, run in runs:
        log.info("fault: %s", key)
        t0 = time.perf_counter()
        try:
            result = run()
        except faults_storage.MountRefusedError as exc:
            out.append({"name": "disk full on the data directory", "skipped": str(exc)})
            continue
        out.append({"name": result.name, "survived": result.survived, "checks": len(result.checks),
                    "passed": sum(ok for _w, ok, _d in result.checks), "failures": result.failures(),
                    "seconds": round(time.perf_counter() - t0, 1)})
    return out


def _auth_json(result: AuthProbeResult) -> dict[str, Any]:
    return {"tried": result.tried, "5xx": result.five_xx, "crashes": len(result.crashes),
            "statuses": dict(sorted(result.statuses.items())), "problems": result.crashes + result.problems}


def run_auth_only() -> dict[str, Any]:
    root = Path(tempfile.mkdtemp(prefix="docent-stress-auth-"))
    report = {"root": str(root), "auth": _auth_json(run_auth_probes(root / "auth"))}
    report["ok"] = not report["auth"]["problems"] and report["auth"]["5xx"] == 0
    return report


def run(args: argparse.Namespace) -> dict[str, Any]:
    if args.auth_only:
        return run_auth_only()
    root = Path(tempfile.mkdtemp(prefix="docent-stress-"))
    server = ModelServer(root / "model-server")
    stack: Stack | None = None
    report: dict[str, Any] = {"root": str(root)}
    try:
        server.start()
        stack = Stack(root / "main", rag_env={**HOSTILE_ENV, **server.rag_env()})
        stack.start()
        stack.make_seed(root / "main")
        baseline, outside = stack.snapshot(), stack.outside_files()
        log.info("bad-input corpus")
        corpus = run_corpus(build_corpus(stack.seed, str(stack.data)),
                            {"gateway": stack.gw_port, "rag": stack.rag_port}, stack.token)
        (root / "hostile").mkdir()
        hostile = run_hostile(stack, root / "hostile")
        security = run_security(stack)
        report["bad_input"] = {"tried": corpus.tried, "4xx": corpus.client_errors, "5xx": corpus.five_xx,
                               "crashes": len(corpus.crashes), "accepted": len(corpus.accepted),
                               "statuses": dict(sorted(corpus.statuses.items())),
                               "problems": corpus.server_errors + corpus.crashes + corpus.accepted}
        report["hostile"] = {"files": len(hostile.outcomes), "handled": hostile.handled,
                             "problems": hostile.problems, "outcomes": hostile.outcomes}
        report["security"] = {"tried": security.tried, "problems": security.problems}
        report["integrity"] = _integrity(stack, baseline, outside)
        report["faults"] = _faults(root, stack, server)
        log.info("load: %d sessions x %d messages", args.sessions, args.messages)
        load = run_load(stack, args.sessions, args.messages, build_files=args.build_files)
        report["load"] = _load_json(load)
        if args.soak_s > 0:
            log.info("soak: %d sessions for %d s", args.soak_sessions, args.soak_s)
            soak = run_load(stack, args.soak_sessions, 0, build_files=args.build_files, duration_s=args.soak_s)
            report["soak"] = {**_load_json(soak), "seconds": args.soak_s}
        log.info("accounts probes")
        report["auth"] = _auth_json(run_auth_probes(root / "auth"))
    finally:
        if stack is not None:
            stack.stop()
        server.stop()
    report["ok"] = _ok(report)
    return report


def _load_json(result: LoadResult) -> dict[str, Any]:
    return {**result.summary(), "problems": result.errors[:20] + result.storage_problems[:20]}


def _ok(report: dict[str, Any]) -> bool:
    bad = report["bad_input"]
    load_ok = all(not report[k]["errors"] and report[k]["stored_exactly_once"] == report[k]["messages"]
                  for k in ("load", "soak") if k in report)
    auth_ok = "auth" not in report or (not report["auth"]["problems"] and report["auth"]["5xx"] == 0)
    return (auth_ok and bad["5xx"] == 0 and bad["crashes"] == 0 and bad["accepted"] == 0 and not report["hostile"]["problems"]
            and not report["security"]["problems"] and not report["integrity"]["problems"]
            and all(f.get("survived", True) for f in report["faults"]) and load_ok)


def _auth_rows(auth: dict[str, Any]) -> list[tuple[str, Any]]:
    return [("Accounts probes tried (every route, both services; auth bodies; storm)", auth["tried"]),
            ("… answered 5xx / crashes", f"{auth['5xx']} / {auth['crashes']}"),
            ("… statuses", ", ".join(f"{k}: {v}" for k, v in auth["statuses"].items())),
            ("… wrong refusals (not the expected 401/403/429)", len(auth["problems"]))]


def table(report: dict[str, Any]) -> str:
    if "bad_input" not in report:
        return _rows_table(_auth_rows(report["auth"]), report["ok"])
    bad, hostile, sec, integ = report["bad_input"], report["hostile"], report["security"], report["integrity"]
    survived = sum(1 for f in report["faults"] if f.get("survived"))
    injected = sum(1 for f in report["faults"] if "survived" in f)
    rows = [("Malformed requests tried (both services, every route)", bad["tried"]),
            ("… answered 4xx", bad["4xx"]), ("… answered 5xx", bad["5xx"]),
            ("… crashes (dropped connection or dead process)", bad["crashes"]),
            ("… malformed but accepted (2xx)", bad["accepted"]),
            ("Hostile files refused or failed alone, with a reason", f"{hostile['handled']} / {hostile['files']}"),
            ("Token and CORS probes / problems", f"{sec['tried']} / {len(sec['problems'])}"),
            ("Data-integrity checks passed", f"{integ['passed']} / {integ['checks']}"),
            ("Faults injected / survived", f"{injected} / {survived}")]
    for fault in report["faults"]:
        state = f"skipped: {fault['skipped']}" if "skipped" in fault else (
            f"{'survived' if fault['survived'] else 'FAILED'} ({fault['passed']}/{fault['checks']} checks)")
        rows.append((f"· {fault['name']}", state))
    for key, label in (("load", "Load"), ("soak", "Soak")):
        if key not in report:
            continue
        run = report[key]
        shape = (f"{run['sessions']} sessions × {run['messages'] // max(run['sessions'], 1)} messages"
                 if key == "load" else f"{run['sessions']} sessions for {run['seconds']} s, {run['messages']} messages")
        memory = ", ".join(f"{name} {m['start_mb']}→{m['end_mb']} MB ({m['growth_mb']:+} MB, peak {m['peak_mb']})"
                           for name, m in run["memory"].items())
        rows += [(f"{label}: {shape}, index build running", f"build {run['build']}"),
                 (f"{label}: throughput", f"{run['throughput_msg_s']} messages/s"),
                 (f"{label}: latency p50 / p95 / p99", f"{run['p50_s']} / {run['p95_s']} / {run['p99_s']} s"),
                 (f"{label}: errors", run["errors"]),
                 (f"{label}: messages stored exactly once", f"{run['stored_exactly_once']} / {run['messages']}"),
                 (f"{label}: memory (RSS)", memory)]
    if "auth" in report:
        rows += _auth_rows(report["auth"])
    return _rows_table(rows, report["ok"])


def _rows_table(rows: list[tuple[str, Any]], ok: bool) -> str:
    width = max(len(r[0]) for r in rows)
    lines = [f"| {'Check'.ljust(width)} | Result |", f"|{'-' * (width + 2)}|--------|"]
    lines += [f"| {name.ljust(width)} | {value} |" for name, value in rows]
    lines.append(f"\nOverall: {'PASS' if ok else 'FAIL'}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval.stress", description=__doc__.splitlines()[0])
    parser.add_argument("--report", action="store_true", help="print the Markdown table (default: JSON)")
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--messages", type=int, default=10)
    parser.add_argument("--build-files", type=int, default=30, help="documents in the build that runs under load")
    parser.add_argument("--soak-s", type=int, default=0, help="soak duration in seconds (0 = no soak)")
    parser.add_argument("--soak-sessions", type=int, default=8)
    parser.add_argument("--json", type=Path, help="also write the full report as JSON here")
    parser.add_argument("--auth-only", action="store_true", help="run only the accounts probes (part 6)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s", stream=sys.stderr)
    logging.getLogger("backend").setLevel(logging.WARNING)  # the in-process gateway of the SQLite fault
    report = run(args)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2, default=str))
    sys.stdout.write((table(report) if args.report else json.dumps(report, indent=2, default=str)) + "\n")
    for section in ("bad_input", "hostile", "security", "integrity", "auth"):
        for problem in report.get(section, {"problems": []})["problems"][:20]:
            log.error("%s: %s", section, problem)
    for fault in report.get("faults", []):
        for failure in fault.get("failures", []):
            log.error("fault: %s", failure)
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
