"""`python -m backend create-user NAME --role admin|editor|viewer --password-stdin` and `… audit verify`.

The password is read from standard input (never an argument, which `ps` and shell history would
show), so `printf '%s' "$PW" | python -m backend create-user ann --role admin --password-stdin`.
Creating the first user turns accounts on; the first admin also becomes the owner of every
session and index made before, and the grant-signing secret is made in the data directory.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from backend.config import GatewayConfigError, load_gateway_config
from backend.passwords import PasswordPolicyError, hash_password
from backend.store import Store
from backend.store_accounts import ROLES, UserExistsError
from common import grants


def _store() -> tuple[Store, object]:
    config = load_gateway_config()
    return Store(config.database), config


def create_user(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m backend create-user", description="Add a Docent user")
    parser.add_argument("name")
    parser.add_argument("--role", choices=ROLES, required=True)
    parser.add_argument("--password-stdin", action="store_true", required=True,
                        help="read the password from standard input (its first line)")
    args = parser.parse_args(argv)
    password = sys.stdin.readline().rstrip("\r\n")
    try:
        store, config = _store()
        hashed = hash_password(password)
        # The secret first: a running RAG API sees it appear (access.ServiceAccess) and requires grants before
        # the first user exists, so no request without a grant is served once accounts are on.
        secret = grants.load_secret(config.auth_secret, config.data_dir, create=True)  # type: ignore[attr-defined]
        store.set_audit_key(lambda: secret)
        user = store.create_user(args.name.strip(), args.role, hashed)
        store.audit("cli", "user_created", target=user["id"], detail={"username": user["username"],
                                                                      "role": args.role})
    except (GatewayConfigError, PasswordPolicyError, UserExistsError, ValueError) as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 2
    sys.stdout.write(f"created {args.role} {user['username']} ({user['id']}); accounts are on\n")
    return 0


def audit(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m backend audit", description="Check the audit log")
    parser.add_argument("action", choices=("verify",))
    parser.parse_args(argv)
    try:
        store, config = _store()
        key = grants.load_secret(config.auth_secret, config.data_dir)  # type: ignore[attr-defined]
    except (GatewayConfigError, ValueError) as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 2
    store.set_audit_key(lambda: key)
    report = store.verify_chain()
    if report.ok:
        note = f" ({report.reason})" if report.reason else ""
        sys.stdout.write(f"audit log intact: {report.rows} rows, each chained to the one before, "
                         f"the newest matching the head anchor{note}\n")
        return 0
    sys.stdout.write(f"audit log TAMPERED at row {report.first_bad_seq}: {report.reason}\n")
    return 1
