"""How long `POST /verify` takes, per request and per sentence, in both forms.

    python -m eval.bench_verify --data-dir ../shared/eval-data --rounds 10

Starts the RAG API as a subprocess (its parser warmed at start-up, as in production) on a temporary
data directory, indexes the shared Northwind leave policy through `/index`, then checks the same
eight-sentence draft `--rounds` times in each form: against the passages it cites (the sources
form: the verifier alone) and against the index (a search per sentence, then the verifier). It
prints p50/p95 per request and per sentence, the request's own `timings_ms`, and the load average:
timings depend on the machine's load; tests never assert on them.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from eval.metrics import percentile
from testkit.client import read_events
from testkit.processes import RagApiProcess, free_port

POLICY = Path("localgpt") / "corpora" / "northwind_leave_policy.pdf"
#: Four true sentences and four false ones (a stitched claim, a number swap, the opposite, an added fact).
DRAFT = [
    ("Employees at Grade 7 and above accrue 28 days [1].", 1),
    ("Employees at Grade 7 and above must approve any absence longer than 10 consecutive working days [1].", 1),
    ("Sick leave is paid at 100 percent of base salary for the first 12 weeks of a single absence [2].", 2),
    ("Parental leave is 12 weeks per child [2].", 2),
    ("Jury service is paid in full for up to 15 working days per calendar year [2].", 2),
    ("Contractors engaged through an agency are covered by this policy [3].", 3),
    ("Northwind Robotics recognises 9 public holidays [3].", 3),
    ("Employees may work from home on Fridays [3].", 3),
]


def _post(url: str, path: str, body: dict[str, Any], timeout: float = 600) -> Any:
    request = urllib.request.Request(url + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    return urllib.request.build_opener(urllib.request.ProxyHandler({})).open(request, timeout=timeout)


def _pages(pdf: Path) -> list[str]:
    import pymupdf

    with pymupdf.open(pdf) as doc:
        return [" ".join(page.get_text().split()) for page in doc]


def run(data_dir: Path, rounds: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-verify-") as tmp:
        root = Path(tmp)
        uploads = root / "data" / "uploads" / "hr"
        uploads.mkdir(parents=True)
        shutil.copy(data_dir / POLICY, uploads / POLICY.name)
        api = RagApiProcess(root / "data", free_port(), gateway_url="http://127.0.0.1:9")
        api.start(wait_s=300)
        try:
            job = json.loads(_post(api.url, "/index", {"index": "hr", "paths": [str(uploads)]}).read())
            for _ in read_events(urllib.request.urlopen(f"{api.url}/index/jobs/{job['job_id']}/events", timeout=600)):
                pass
            pages = _pages(uploads / POLICY.name)
            text = " ".join(sentence for sentence, _ in DRAFT)
            forms = {"sources": {"text": text, "sources": [{"n": n, "text": page, "name": POLICY.name}
                                                            for n, page in enumerate(pages, start=1)]},
                     "index": {"text": " ".join(s.split(" [")[0] + "." for s, _ in DRAFT), "index": "hr"}}
            out: dict[str, Any] = {}
            for form, body in forms.items():
                walls, inner = [], []
                for _ in range(rounds):
                    t0 = time.perf_counter()
                    payload = json.loads(_post(api.url, "/verify", body).read())
                    walls.append((time.perf_counter() - t0) * 1000)
                    inner.append(payload["timings_ms"])
                sentences = len(payload["sentences"])
                out[form] = {"sentences": sentences, "request_p50_ms": round(percentile(walls, 0.5), 1),
                             "request_p95_ms": round(percentile(walls, 0.95), 1),
                             "per_sentence_p50_ms": round(percentile(walls, 0.5) / sentences, 1),
                             "timings_ms_p50": {k: round(percentile([t.get(k, 0.0) for t in inner], 0.5), 1)
                                                for k in inner[0]},
                             "verdicts": [s["verdict"] for s in payload["sentences"]]}
            return out
        finally:
            api.stop()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m eval.bench_verify", description=__doc__.split("\n")[0])
    p.add_argument("--data-dir", type=Path, required=True, help="the shared eval data (../shared/eval-data)")
    p.add_argument("--rounds", type=int, default=10, help="requests per form")
    args = p.parse_args(argv)
    if not (args.data_dir / POLICY).is_file():
        p.error(f"{args.data_dir / POLICY} not found: give the shared eval data folder")
    load = os.getloadavg()
    result = run(args.data_dir, max(1, args.rounds))
    print(json.dumps({"load_before": [round(x, 2) for x in load], "load_after": [round(x, 2) for x in os.getloadavg()],
                      "cores": os.cpu_count(), **result}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
