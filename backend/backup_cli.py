"""`python -m backend backup <dir>` and `python -m backend restore <dir> [--lancedb <path>]`.

Both read the gateway's settings (DOCENT_DATA_DIR, DB_PATH, RAG_API_URL / RAG_WRITER_URL,
DOCENT_API_TOKEN); `backup` runs while the services run and asks the RAG API for its index store,
`restore` fills an empty data folder before the services start (backend/backup.py says what is
copied and how). Exit status: 0 done, 1 the RAG API failed or the stream broke off, 2 bad arguments
(a folder that is not empty, not a backup).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from backend.backup import BackupError, BackupRefused, Report, restore, service_token, take
from backend.config import GatewayConfig, GatewayConfigError, load_gateway_config
from backend.rag_client import RagClient
from common.errors import ApiError

#: Seconds without a byte from the RAG API before the backup gives up.
STREAM_TIMEOUT_S = 600.0


def backup_main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m backend backup",
                                     description="Back up a running Docent: database, uploads and index store")
    parser.add_argument("dir", type=Path, help="a new (or empty) folder for the backup")
    parser.add_argument("--json", action="store_true", help="print the report as one JSON object")
    args = parser.parse_args(argv)
    config = _config()
    if config is None:
        return 2
    token = service_token(config.api_token, config.auth_secret, config.data_dir)
    rag = RagClient(config.rag_writer_url, token=token, timeout_s=STREAM_TIMEOUT_S)
    try:
        report = take(config.database, config.data_dir, config.uploads_dir, args.dir, rag.open_backup)
    except BackupError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 2 if isinstance(exc, BackupRefused) else 1
    except ApiError as exc:
        sys.stderr.write(f"error: the RAG API did not send its index store: {exc.message}\n")
        return 1
    _print(report, args.json, "backed up to")
    return 0


def restore_main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m backend restore",
                                     description="Restore a backup into an empty data folder (services stopped)")
    parser.add_argument("dir", type=Path, help="a folder made by `python -m backend backup`")
    parser.add_argument("--lancedb", type=Path, default=None,
                        help="where the RAG API keeps its index store (default LANCEDB_URI, else "
                             "DOCENT_DATA_DIR/lancedb)")
    parser.add_argument("--json", action="store_true", help="print the report as one JSON object")
    args = parser.parse_args(argv)
    config = _config()
    if config is None:
        return 2
    store = args.lancedb or Path(os.environ.get("LANCEDB_URI") or config.data_dir / "lancedb")
    try:
        report = restore(args.dir, config.database, config.data_dir, config.uploads_dir, store)
    except BackupError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 2 if isinstance(exc, BackupRefused) else 1
    _print(report, args.json, f"restored into {config.data_dir} from")
    return 0


def _config() -> GatewayConfig | None:
    try:
        return load_gateway_config()
    except GatewayConfigError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return None


def _print(report: Report, as_json: bool, verb: str) -> None:
    if as_json:
        sys.stdout.write(json.dumps(report.to_json()) + "\n")
        return
    sys.stdout.write(f"{verb} {report.directory}: {report.sessions} sessions, {report.messages} messages, "
                     f"{report.indexes} indexes with {report.documents} documents, {report.uploads} files, "
                     f"{len(report.tables)} index tables; {report.bytes / 2**20:.1f} MiB in "
                     f"{report.seconds:.1f} s\n")
