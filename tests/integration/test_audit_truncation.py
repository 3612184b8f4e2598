"""Deleting the newest audit rows is detected: `python -m backend audit verify` checks the head anchor.

Rows are written by the real CLI (`create-user` audits `user_created`) into a real SQLite file; the
tampering is what someone editing the file could do (drop the append-only trigger, delete rows,
rewrite the anchor without the grant secret).
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

from backend.store import Store
from common import grants
from testkit import REPO_ROOT
from testkit.accounts import create_user
from testkit.processes import base_env


def _verify(data: Path, db: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "backend", "audit", "verify"], capture_output=True, text=True,
                          cwd=REPO_ROOT, env=base_env(data, DB_PATH=str(db)), timeout=60, check=False)


def _log_of_four(tmp_path: Path) -> tuple[Path, Path]:
    data = tmp_path / "data"
    for i, name in enumerate(("ann", "bob", "cy", "dee")):
        create_user(data, name, "admin" if i == 0 else "viewer", f"{name}-password-{i}xyz")
    return data, data / "docent.db"


def _cut_newest(db: Path, rows: int) -> None:
    conn = sqlite3.connect(db)
    conn.execute("DROP TRIGGER audit_log_no_delete")  # what someone editing the file could do
    conn.execute("DELETE FROM audit_log WHERE seq > (SELECT MAX(seq) FROM audit_log) - ?", (rows,))
    conn.commit()
    conn.close()


def test_deleting_the_newest_two_rows_makes_verify_fail_and_say_so(tmp_path: Path) -> None:
    data, db = _log_of_four(tmp_path)
    ok = _verify(data, db)
    assert ok.returncode == 0 and "intact: 4 rows" in ok.stdout, ok.stdout + ok.stderr
    _cut_newest(db, 2)
    bad = _verify(data, db)
    assert bad.returncode == 1, bad.stdout
    assert "TAMPERED" in bad.stdout and "newest 2 rows" in bad.stdout and "deleted" in bad.stdout


def test_rewriting_the_anchor_without_the_secret_is_detected(tmp_path: Path) -> None:
    data, db = _log_of_four(tmp_path)
    _cut_newest(db, 1)
    conn = sqlite3.connect(db)
    seq, digest = conn.execute("SELECT seq, hash FROM audit_log ORDER BY seq DESC LIMIT 1").fetchone()
    conn.execute("UPDATE audit_head SET seq = ?, hash = ?", (seq, digest))  # the old MAC, or a guessed one
    conn.commit()
    conn.close()
    bad = _verify(data, db)
    assert bad.returncode == 1 and "signature does not match" in bad.stdout, bad.stdout


def test_an_append_after_a_cut_keeps_the_gap_visible(tmp_path: Path) -> None:
    data, db = _log_of_four(tmp_path)
    _cut_newest(db, 2)
    store = Store(db)
    secret = grants.load_secret("", data)
    store.set_audit_key(lambda: secret)
    store.audit("ann", "login", address="127.0.0.1")  # the gateway goes on writing
    bad = _verify(data, db)
    assert bad.returncode == 1 and "missing" in bad.stdout, bad.stdout


def test_without_accounts_a_cut_made_with_sql_alone_is_still_detected(tmp_path: Path) -> None:
    db = tmp_path / "data" / "docent.db"
    store = Store(db)
    for _ in range(3):
        store.audit("single", "upload", target="x")
    assert not (tmp_path / "data" / grants.SECRET_FILE).exists()
    assert _verify(tmp_path / "data", db).returncode == 0
    _cut_newest(db, 2)
    bad = _verify(tmp_path / "data", db)
    assert bad.returncode == 1 and "newest 2 rows" in bad.stdout, bad.stdout
