"""Build the claims set: resolve every claim's passages in the real documents and write the rows.

    python -m eval.claims.build --data-dir ../shared/eval-data \\
        [--debref-dir ~/.cache/docent/debian-reference] [--python-doc-dir ~/.cache/docent/python3-doc] \\
        [--split dev|test|all] --out /tmp/claims.jsonl

Why a build step: the committed files (`claims_dev.jsonl`, `claims_test.jsonl`)
hold only hand-written claims and anchors into documents that may not be
copied here. The builder reads the documents (see `eval.claims.documents`),
cuts each passage out, and writes one self-contained row per claim:
`{"id", "split", "family", "kind", "label", "question"?, "claim",
"sources": [{"n", "name", "text"}], "note"}`. It checks the rows as it goes
and exits 1 naming every anchor that is missing or ambiguous and every row
that is malformed; nothing is written then.
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from eval.claims.documents import FAMILIES, Library, MissingSourceError, default_python_doc_dir
from eval.claims.passages import AnchorError, locate
from testkit.debs import debref_dir

HERE = Path(__file__).resolve().parent
SPLITS = {"dev": HERE / "claims_dev.jsonl", "test": HERE / "claims_test.jsonl"}
#: Kinds and the label each takes unless the row says otherwise.
KINDS = {"true": "supported", "stitched": "contradicted", "number": "contradicted", "entity": "contradicted",
         "polarity": "contradicted", "overgeneral": "contradicted", "unsupported": "unsupported"}
LABELS = ("supported", "contradicted", "unsupported")
#: The fewest rows of each kind over both splits: enough of each to measure the verifier per kind.
MINIMUM = {"true": 120, "stitched": 35, "number": 35, "entity": 35, "polarity": 35, "overgeneral": 35,
           "unsupported": 35}
MINIMUM_ROWS = 320
_MARKER = re.compile(r"\[(\d+)\]")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m eval.claims.build", description=__doc__.split("\n")[0])
    p.add_argument("--data-dir", type=Path, default=Path("../shared/eval-data"))
    p.add_argument("--debref-dir", type=Path, default=debref_dir(), help="where `make setup-debref` put the .debs")
    p.add_argument("--python-doc-dir", type=Path, default=default_python_doc_dir(),
                   help="where `apt-get download python3.11-doc` put the .deb")
    p.add_argument("--split", choices=("dev", "test", "all"), default="all")
    p.add_argument("--out", type=Path, required=True)
    return p.parse_args(argv)


def read_specs(split: str) -> list[dict[str, Any]]:
    """The committed rows of one split ("all": dev then test), each tagged with its split."""
    names = list(SPLITS) if split == "all" else [split]
    rows = []
    for name in names:
        for number, line in enumerate(SPLITS[name].read_text(encoding="utf-8").splitlines(), start=1):
            if line.strip():
                row = json.loads(line)
                row["split"] = name
                row["_line"] = f"{SPLITS[name].name}:{number}"
                rows.append(row)
    return rows


def row_problems(spec: dict[str, Any]) -> list[str]:
    """What is wrong with one committed row, apart from its anchors."""
    problems = []
    kind, sources = spec.get("kind"), spec.get("sources") or []
    if kind not in KINDS:
        problems.append(f"kind {kind!r} is not one of {sorted(KINDS)}")
    if spec.get("label", KINDS.get(kind, "supported")) not in LABELS:
        problems.append(f"label {spec.get('label')!r} is not one of {LABELS}")
    if not str(spec.get("claim", "")).strip():
        problems.append("no claim")
    if kind != "true" and not str(spec.get("note", "")).strip():
        problems.append("a false claim needs a note saying why it is false")
    markers = {int(n) for n in _MARKER.findall(spec.get("claim", ""))}
    if not markers:
        problems.append("the claim cites no source")
    if not markers <= set(range(1, len(sources) + 1)):
        problems.append(f"markers {sorted(markers)} name sources that do not exist (there are {len(sources)})")
    for source in sources:
        if source.get("family") not in FAMILIES or "doc" not in source:
            problems.append(f"source {source} needs a family of {FAMILIES} and a doc")
        elif not ("anchor" in source or ("start" in source and "end" in source)):
            problems.append(f"source {source['doc']} needs an anchor, or a start and an end")
    return problems


def build_row(spec: dict[str, Any], library: Library) -> dict[str, Any]:
    """One output row; `AnchorError` when a passage does not resolve."""
    sources = []
    for n, source in enumerate(spec["sources"], start=1):
        text = locate(library.document(source["family"], source["doc"]), source)
        sources.append({"n": n, "name": source["doc"], "text": text})
    row: dict[str, Any] = {"id": spec["id"], "split": spec["split"], "family": spec["sources"][0]["family"],
                           "kind": spec["kind"], "label": spec.get("label", KINDS[spec["kind"]])}
    if spec.get("question"):
        row["question"] = spec["question"]
    row.update({"claim": spec["claim"], "sources": sources, "note": spec.get("note", "")})
    return row


def build(specs: list[dict[str, Any]], library: Library) -> tuple[list[dict[str, Any]], list[str]]:
    """The rows, and every problem found (anchors, shapes, duplicate ids); rows are only good without problems."""
    rows, problems = [], []
    ids = Counter(spec.get("id") for spec in specs)
    problems += [f"id {i!r} is used {n} times" for i, n in ids.items() if n > 1]
    for spec in specs:
        where = f"{spec['_line']} ({spec.get('id')})"
        shape = row_problems(spec)
        if shape:
            problems += [f"{where}: {p}" for p in shape]
            continue
        try:
            rows.append(build_row(spec, library))
        except (AnchorError, MissingSourceError) as exc:
            problems.append(f"{where}: {exc}")
    return rows, problems


def summary(rows: list[dict[str, Any]]) -> str:
    kinds = Counter((r["split"], r["kind"]) for r in rows)
    families = Counter((r["split"], r["family"]) for r in rows)
    lines = [f"{len(rows)} rows"]
    for split in SPLITS:
        per_kind = ", ".join(f"{k} {kinds[(split, k)]}" for k in KINDS)
        per_family = ", ".join(f"{f} {families[(split, f)]}" for f in FAMILIES)
        lines.append(f"  {split}: {sum(n for (s, _), n in kinds.items() if s == split)} rows; {per_kind}; {per_family}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    args = parse_args(argv)
    library = Library(args.data_dir, args.debref_dir, args.python_doc_dir)
    rows, problems = build(read_specs(args.split), library)
    if problems:
        sys.stderr.write(f"{len(problems)} problems, nothing written:\n" + "\n".join(problems) + "\n")
        return 1
    args.out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    sys.stderr.write(summary(rows) + f"\nwritten to {args.out}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
