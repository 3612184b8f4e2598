"""Run the claims set through the verifier and report how often it is right, kind by kind.

    python -m eval.claims.check --rows /tmp/claims.jsonl [--url http://127.0.0.1:8001] [--json-out F] [-v]
    python -m eval.claims.check --data-dir ../shared/eval-data --split dev   # builds the rows first

With `--url` every row goes through a running RAG API's `POST /verify` (the door every client uses);
without it the verifier runs in this process (the same code, no HTTP). A row is right when the
verifier's whole-text verdict (`supported`) matches its label: true claims must be supported, every
false kind must not be. Prints the share caught per kind, the share of true claims kept, the
balanced accuracy (mean of the true-claim and false-claim rates), and the per-sentence time.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

Check = Callable[[dict[str, Any]], tuple[bool, list[dict[str, Any]]]]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m eval.claims.check", description=__doc__.split("\n")[0])
    p.add_argument("--rows", type=Path, help="rows written by eval.claims.build (else built now)")
    p.add_argument("--data-dir", type=Path, default=Path("../shared/eval-data"))
    p.add_argument("--split", choices=("dev", "test", "all"), default="all")
    p.add_argument("--url", help="a running RAG API; its POST /verify checks each row")
    p.add_argument("--token", help="bearer token for --url")
    p.add_argument("--json-out", type=Path)
    p.add_argument("-v", "--verbose", action="store_true", help="print every row the verifier gets wrong")
    return p.parse_args(argv)


def load_rows(args: argparse.Namespace) -> list[dict[str, Any]]:
    if args.rows:
        rows = [json.loads(line) for line in args.rows.read_text(encoding="utf-8").splitlines() if line.strip()]
        return [r for r in rows if args.split == "all" or r.get("split") == args.split]
    from eval.claims.build import build, read_specs
    from eval.claims.documents import Library

    specs = [s for split in (("dev", "test") if args.split == "all" else (args.split,)) for s in read_specs(split)]
    rows, problems = build(specs, Library(args.data_dir))
    if problems:
        raise SystemExit("\n".join(problems))
    return rows


def request_of(row: dict[str, Any]) -> dict[str, Any]:
    body: dict[str, Any] = {"text": row["claim"],
                            "sources": [{"n": s["n"], "text": s["text"], "name": s.get("name", "")}
                                        for s in row["sources"]]}
    if row.get("question"):
        body["question"] = row["question"]
    return body


def over_http(url: str, token: str | None) -> Check:
    def check(row: dict[str, Any]) -> tuple[bool, list[dict[str, Any]]]:
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        req = urllib.request.Request(url.rstrip("/") + "/verify", json.dumps(request_of(row)).encode(), headers)
        with urllib.request.urlopen(req, timeout=120) as response:
            body = json.load(response)
        return bool(body["supported"]), body["sentences"]
    return check


def in_process() -> Check:
    from rag_system.grounding.verifier import Source, verify

    def check(row: dict[str, Any]) -> tuple[bool, list[dict[str, Any]]]:
        body = request_of(row)
        result = verify(body["text"], [Source(s["n"], s["text"], s["name"]) for s in body["sources"]],
                        body.get("question", ""))
        return result.supported, [{"text": s.text, "verdict": s.verdict, "findings": s.messages()}
                                  for s in result.sentences]
    return check


def evaluate(rows: list[dict[str, Any]], check: Check, verbose: bool = False) -> dict[str, Any]:
    per_kind: dict[str, list[int]] = {}
    per_sentence_ms: list[float] = []
    wrong: list[dict[str, Any]] = []
    for row in rows:
        t0 = time.perf_counter()
        supported, sentences = check(row)
        per_sentence_ms.append((time.perf_counter() - t0) * 1000 / max(1, len(sentences)))
        right = supported == (row["label"] == "supported")
        per_kind.setdefault(row["kind"], [0, 0])[0 if right else 1] += 1
        if not right:
            wrong.append({"id": row["id"], "kind": row["kind"], "claim": row["claim"], "sentences": sentences})
            if verbose:
                print(f"{row['id']} [{row['kind']}] {row['claim']}", file=sys.stderr)
                for s in sentences:
                    print(f"    -> {s['verdict']}: {'; '.join(s['findings'])}", file=sys.stderr)
    rate = {k: v[0] / sum(v) for k, v in per_kind.items()}
    false_kinds = [k for k in per_kind if k != "true"]
    caught = sum(per_kind[k][0] for k in false_kinds) / max(1, sum(sum(per_kind[k]) for k in false_kinds))
    kept = rate.get("true", 0.0)
    return {"rows": len(rows), "true_kept": round(kept, 3), "false_caught": round(caught, 3),
            "balanced_accuracy": round((kept + caught) / 2, 3),
            "per_kind": {k: {"right": v[0], "rows": sum(v), "rate": round(rate[k], 3)} for k, v in sorted(per_kind.items())},
            "per_sentence_ms_p50": round(statistics.median(per_sentence_ms), 1) if per_sentence_ms else None,
            "wrong": wrong}


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    rows = load_rows(args)
    report = evaluate(rows, over_http(args.url, args.token) if args.url else in_process(), args.verbose)
    for kind, r in report["per_kind"].items():
        what = "kept" if kind == "true" else "caught"
        print(f"{kind:12} {what} {r['right']:3}/{r['rows']:<3} {r['rate']:.3f}")
    print(f"balanced accuracy {report['balanced_accuracy']:.3f} (true kept {report['true_kept']:.3f}, "
          f"false caught {report['false_caught']:.3f}); p50 {report['per_sentence_ms_p50']} ms a sentence")
    if args.json_out:
        args.json_out.write_text(json.dumps(report, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
