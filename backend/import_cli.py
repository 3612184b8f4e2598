"""`python -m backend import-localgpt --db <chat_data.db> [--lancedb <dir>] [--uploads <dir>]`.

Imports a localGPT install into this gateway's database and upload folder (the same settings
as `python -m backend`: DOCENT_DATA_DIR, DB_PATH), then re-indexes the imported documents
through the RAG API (RAG_API_URL), following each build until it ends. Running it again
imports nothing twice and rebuilds only what changed. Exit status: 0 done, 1 a build failed or
the RAG API could not be reached (the import itself is kept), 2 bad arguments or database.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from backend.config import GatewayConfigError, load_gateway_config
from backend.localgpt_import import ImportReport, import_localgpt
from common.errors import ApiError

POLL_S = 1.0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m backend import-localgpt",
                                     description="Bring a localGPT install (its chat_data.db and uploads) into Docent")
    parser.add_argument("--db", required=True, type=Path, help="localGPT's SQLite database (backend/chat_data.db)")
    parser.add_argument("--lancedb", type=Path, help="localGPT's LanceDB folder (reported; vectors are rebuilt)")
    parser.add_argument("--uploads", type=Path, help="localGPT's upload folder, where its documents are")
    parser.add_argument("--no-build", action="store_true", help="import only; build the indexes later")
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds to follow the builds (default 3600)")
    parser.add_argument("--json", action="store_true", help="print the report as one JSON object")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        config = load_gateway_config()
    except GatewayConfigError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 2
    from backend.app import App

    app = App.build(config)
    try:
        try:
            report = import_localgpt(app.store, config.uploads_dir, args.db, uploads=args.uploads,
                                     lancedb=args.lancedb)
        except (FileNotFoundError, ValueError) as exc:
            sys.stderr.write(f"error: {exc}\n")
            return 2
        if not args.json:
            _print_report(report)
        builds = {} if args.no_build else _rebuild(app, report, args.timeout, quiet=args.json)
    finally:
        app.close()
    if args.json:
        sys.stdout.write(json.dumps({**report.to_json(), "builds": builds}) + "\n")
    return 0 if all(state == "done" for state in builds.values()) else 1


def _print_report(report: ImportReport) -> None:
    out = sys.stdout.write
    out(f"sessions: {report.sessions} imported, {report.sessions_existing} already here\n")
    out(f"messages: {report.messages} imported, {report.messages_existing} already here\n")
    out(f"indexes: {report.indexes} imported, {report.indexes_existing} already here\n")
    out(f"documents: {report.documents} copied, {report.documents_existing} already here, "
        f"{len(report.missing_files)} missing, {len(report.unsupported_files)} of an unsupported type\n")
    out(f"session links: {report.links} made\n")
    for line in report.missing_files:
        out(f"  missing: {line}\n")
    for line in report.unsupported_files:
        out(f"  unsupported (not indexed): {line}\n")
    if report.session_documents:
        out(f"session attachments: {report.session_documents} listed; localGPT indexed them into indexes, "
            "which are imported\n")
    if report.lancedb_tables:
        out(f"localGPT LanceDB tables: {len(report.lancedb_tables)} (not reused: the documents are re-indexed "
            "with Docent's embedder)\n")


def _rebuild(app: Any, report: ImportReport, timeout_s: float, *, quiet: bool) -> dict[str, str]:
    """Start a build for every index that needs one, then follow them; index id -> final state."""
    from backend.builds import refresh_job
    from backend.library import start_build

    say = (lambda text: None) if quiet else (lambda text: sys.stdout.write(text + "\n"))
    jobs: dict[str, str] = {}
    states: dict[str, str] = {}
    for iid in report.indexes_to_build:
        try:
            jobs[iid] = start_build(app, iid, {}, "import-localgpt")["job_id"]
            say(f"build started: {iid} (job {jobs[iid]})")
        except ApiError as exc:
            states[iid] = "not_started"
            say(f"build not started for {iid}: {exc.message}")
    deadline = time.monotonic() + timeout_s
    while jobs and time.monotonic() < deadline:
        for iid, job_id in list(jobs.items()):
            try:
                data = app.rag.job(job_id, "import-localgpt")
            except ApiError as exc:
                say(f"build of {iid}: {exc.message}")
                states[iid] = "unknown"
                del jobs[iid]
                continue
            index = app.store.get_index(iid)
            if index is not None:
                refresh_job(app, index, data)
            if data.get("state") in ("done", "failed", "cancelled"):
                states[iid] = str(data["state"])
                del jobs[iid]
                progress = data.get("progress") or {}
                say(f"build {data['state']}: {iid} ({progress.get('done')}/{progress.get('total')} files)")
        if jobs:
            time.sleep(POLL_S)
    for iid in jobs:
        states[iid] = "still_running"
        say(f"build still running after {timeout_s:g} s: {iid} (follow it in the web app)")
    return states
