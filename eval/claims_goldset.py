"""The claim check on realistic answers against the real chunks of the shared corpora.

    python -m eval.claims_goldset --data-dir ../shared/eval-data [--json-out out.json] [-v]

Why: ``tests/unit/test_claims_goldset.py`` holds correct answers for gold-set
rows and invented variants of them, with short excerpts as blocks. Here each
excerpt is replaced by the whole chunk that holds it, as the indexer cuts it
today (ingestion and chunker with the default settings, the embedder's
tokenizer), rendered like the synthesis prompt's blocks (``[n] doc, p. N``
then the chunk text). Bigger blocks hold more numbers and more sentences to
compare polarity with, so this is the harder test of both precision (false
alarms on correct answers) and recall (caught variants). Prints the counts,
every false alarm and every miss, and the check's time per answer.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import docent_native

CASES = Path(__file__).resolve().parent.parent / "tests" / "data" / "claims_goldset.json"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m eval.claims_goldset", description=__doc__.split("\n")[0])
    p.add_argument("--data-dir", type=Path, default=Path("../shared/eval-data"))
    p.add_argument("--cases", type=Path, default=CASES)
    p.add_argument("--json-out", type=Path)
    p.add_argument("-v", "--verbose", action="store_true", help="also print every caught variant")
    return p.parse_args(argv)


def _flat(text: str) -> str:
    return " ".join(text.split())


def load_chunks(corpora: Path, docs: set[str]) -> dict[str, list[Any]]:
    """The real chunks of each named document, cut with the default settings."""
    from rag_system.chunking.chunker import chunk_document
    from rag_system.config import load_settings
    from rag_system.indexing.builder import chunker_options
    from rag_system.embedding.minilm import MiniLMEmbedder
    from rag_system.ingestion import convert

    settings = load_settings(environ={}, dotenv_path=None)
    embedder = MiniLMEmbedder.from_settings(settings)
    options = chunker_options(settings, embedder)
    paths = {p.name: p for p in corpora.rglob("*") if p.name in docs}
    missing = docs - set(paths)
    if missing:
        raise SystemExit(f"not under {corpora}: {sorted(missing)}")
    return {name: chunk_document(convert(path, settings), name, embedder.count_tokens_batch, options)
            for name, path in paths.items()}


def real_blocks(case: dict[str, Any], chunks: dict[str, list[Any]]) -> list[str]:
    """Each excerpt's whole chunk (the one holding its passage), rendered as a block."""
    blocks = []
    for n, block in enumerate(case["blocks"], start=1):
        passage = _flat(block["text"].split("\n", 1)[-1])
        holding = [c for c in chunks[block["doc"]] if passage in _flat(c.text)]
        if not holding:
            raise SystemExit(f"{case['id']}: no chunk of {block['doc']} holds {passage[:60]!r}")
        chunk = holding[0]
        pages = str(chunk.page_start) if chunk.page_start == chunk.page_end else f"{chunk.page_start}-{chunk.page_end}"
        blocks.append(f"[{n}] {block['doc']}, p. {pages}\n{chunk.text}")
    return blocks


def findings(answer: str, blocks: list[str]) -> list[str]:
    out = []
    for sentence in docent_native.check_claims(answer, blocks):
        out += [f"{f['kind']} '{f['text']}' not in {sentence['blocks']}" for f in sentence["facts"] if not f["found"]]
        p = sentence["polarity"]
        if p is not None and not p["agrees"]:
            out.append(f"polarity vs [{p['block']}]: {blocks[p['block'] - 1][p['start']:p['end']][:120]!r}")
    return out


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    cases = json.loads(args.cases.read_text(encoding="utf-8"))
    docs = {b["doc"] for case in cases for b in case["blocks"]}
    chunks = load_chunks(args.data_dir / "localgpt" / "corpora", docs)
    alarms, misses, caught, seconds, rows = 0, 0, 0, 0.0, []
    for case in cases:
        blocks = real_blocks(case, chunks)
        started = time.perf_counter()
        wrong_found = [(w, findings(w["answer"], blocks)) for w in case["wrong"]]
        found = findings(case["answer"], blocks)
        seconds += time.perf_counter() - started
        if found:
            alarms += 1
            print(f"FALSE ALARM {case['id']}: {case['answer']}\n    {found}")
        for wrong, problems in wrong_found:
            if problems:
                caught += 1
                if args.verbose:
                    print(f"caught {case['id']} ({wrong['change']}): {problems}")
            else:
                misses += 1
                print(f"MISSED {case['id']} ({wrong['change']}): {wrong['answer']}")
        rows.append({"id": case["id"], "alarm": found, "variants": [p for _, p in wrong_found]})
    answers = len(cases) + sum(len(c["wrong"]) for c in cases)
    print(f"{len(cases)} correct answers: {alarms} false alarms; {caught + misses} invented variants: "
          f"{caught} caught, {misses} missed; check_claims {1000 * seconds / answers:.2f} ms per answer "
          f"over {len(cases)} real-chunk block sets")
    if args.json_out:
        args.json_out.write_text(json.dumps({"false_alarms": alarms, "caught": caught, "missed": misses,
                                             "rows": rows}, indent=1), encoding="utf-8")
    return 0 if alarms == 0 and misses == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
