"""How long a RAG API grant issued before a revocation keeps working: `python -m eval.grant_revocation`.

Starts a gateway and a RAG API with accounts on (users made with the real CLI) and the default
`DOCENT_GRANT_CHECK_S` (or `--check-s`), then `--trials` times: share an index with a user, get a
grant, use it once (so the RAG API holds the freshest epoch, the worst case), remove the share, and
send the same grant every 50 ms until the RAG API answers 401 `grant_revoked`. Prints the seconds
from the removal's answer to the first refusal (min, median, max) and how many requests were still
served after the removal, as JSON; Documentation/security.md quotes the figures. Before the
revocation epochs this window was the grant's TTL (120 s).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from testkit.accounts import LoginClient, create_user
from testkit.client import Client
from testkit.processes import GatewayProcess, RagApiProcess, free_port

POLL_S = 0.05


def measure(root: Path, trials: int, check_s: float | None) -> dict[str, object]:
    data = root / "data"
    create_user(data, "ann", "editor", "ann-password-1")
    create_user(data, "bob", "viewer", "bob-password-22")
    gw_port, rag_port = free_port(), free_port()
    gw = GatewayProcess(data, port=gw_port, rag_url=f"http://127.0.0.1:{rag_port}")
    env = {} if check_s is None else {"DOCENT_GRANT_CHECK_S": str(check_s)}
    rag = RagApiProcess(data, rag_port, gateway_url=f"http://127.0.0.1:{gw_port}", **env)
    gw.start(wait_s=30)
    windows: list[float] = []
    served_after = 0
    try:
        rag.start(wait_s=240)
        ann, bob = LoginClient(gw.url), LoginClient(gw.url)
        ann.login("ann", "ann-password-1")
        bob.login("bob", "bob-password-22")
        iid = ann.post("/indexes", {"name": "Shared"}).json["index_id"]
        for _ in range(trials):
            ann.post(f"/indexes/{iid}/shares", {"user": "bob", "access": "read"})
            grant = bob.post("/auth/rag-token", {"indexes": [iid], "purpose": "progress"}).json["token"]
            client = Client(rag.url, grant)
            assert client.get("/indexes").status == 200
            ann.delete(f"/indexes/{iid}/shares/bob")
            revoked = time.monotonic()
            while client.get("/indexes").status == 200:
                served_after += 1
                time.sleep(POLL_S)
            windows.append(time.monotonic() - revoked)
    finally:
        rag.stop()
        gw.stop()
    window = {"min": round(min(windows), 2), "median": round(statistics.median(windows), 2),
              "max": round(max(windows), 2)}
    return {"trials": trials, "window_s": window,
            "served_after_revocation": served_after, "grant_check_s": "default" if check_s is None else check_s,
            "poll_s": POLL_S}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--check-s", type=float, default=None, help="DOCENT_GRANT_CHECK_S for the RAG API")
    args = parser.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="docent-revocation-"))
    sys.stdout.write(json.dumps(measure(root, args.trials, args.check_s)) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
