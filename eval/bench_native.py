"""Benchmark ``docent_native`` against its pure-Python references.

Why: every native function must show why it is native (Documentation/native.md).
This CLI times each one at realistic sizes (fusing two 10,000-candidate
retrieval lists; fingerprinting a ~200 MB corpus of 200 files; checking a
12-sentence answer against 10 blocks of 300 words, and the fact-level claim
check of a 12-sentence answer full of numbers, dates and names against those
blocks seasoned with facts; picking evidence sentences
from 20 blocks of 400 words; the evidence contrast of 10,000 similarities)
against the reference in ``testkit.native_reference`` and prints milliseconds
and speed-up.
It also checks both sides return identical results before timing them.

Run: ``python -m eval.bench_native [--json]``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path

import docent_native

from testkit.native_reference import (
    evidence_contrast_reference,
    rrf_fuse_reference,
    select_evidence_sentences_reference,
    sha256_bytes_reference,
    sha256_files_reference,
    validate_citations_reference,
)
from testkit.native_reference_claims import check_claims_reference


@dataclass(frozen=True)
class Row:
    """One benchmark line: best-of-N wall time of each side."""

    name: str
    python_ms: float
    native_ms: float
    python_median_ms: float
    native_median_ms: float

    @property
    def speedup(self) -> float:
        return self.python_ms / self.native_ms if self.native_ms > 0 else float("inf")


def time_ms(func: Callable[[], object], repeats: int) -> tuple[float, float]:
    """Best and median wall time in ms; the minimum is the least noisy estimate."""
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        func()
        samples.append((time.perf_counter() - start) * 1000.0)
    return min(samples), statistics.median(samples)


def compare(name: str, python: Callable[[], object], native: Callable[[], object], repeats: int) -> Row:
    """Check equal outputs (also a warm-up), then time both sides."""
    if python() != native():
        raise SystemExit(f"{name}: native result differs from the Python reference")
    py_best, py_median = time_ms(python, repeats)
    nat_best, nat_median = time_ms(native, repeats)
    return Row(name, py_best, nat_best, py_median, nat_median)


def make_rankings(n_rankings: int, candidates: int, overlap: float, seed: int) -> list[list[str]]:
    """Rankings of ``candidates`` chunk ids each; ``overlap`` of them shared.

    Mimics dense + lexical retrieval: a shared pool of ids appears in every
    list in a different order, the rest is unique to each retriever.
    """
    rng = random.Random(seed)
    shared = [f"chunk-{i:07d}" for i in range(int(candidates * overlap))]
    rankings = []
    for r in range(n_rankings):
        own = [f"r{r}-chunk-{i:07d}" for i in range(candidates - len(shared))]
        ranking = shared + own
        rng.shuffle(ranking)
        rankings.append(ranking)
    return rankings


def bench_fusion(candidates: int, overlap: float, repeats: int) -> list[Row]:
    rows = []
    for n_rankings, limit in ((2, None), (2, 50), (8, 50)):
        rankings = make_rankings(n_rankings, candidates, overlap, seed=n_rankings)
        weights = [1.0 + i / 10 for i in range(n_rankings)]
        label = f"rrf_fuse {n_rankings}x{candidates:,} ({overlap:.0%} overlap, limit={limit})"
        rows.append(
            compare(
                label,
                partial(rrf_fuse_reference, rankings, 60.0, weights, limit),
                partial(docent_native.rrf_fuse, rankings, 60.0, weights, limit),
                repeats,
            )
        )
    return rows


def write_corpus(folder: Path, files: int, file_bytes: int) -> list[str]:
    """Random (incompressible) files; written once, read warm from page cache."""
    paths = []
    for i in range(files):
        path = folder / f"doc-{i:04d}.bin"
        path.write_bytes(os.urandom(file_bytes))
        paths.append(str(path))
    return paths


def bench_hashing(files: int, file_mb: float, repeats: int) -> list[Row]:
    file_bytes = int(file_mb * (1 << 20))
    total_mb = files * file_bytes / (1 << 20)
    with tempfile.TemporaryDirectory(prefix="docent-bench-") as tmp:
        paths = write_corpus(Path(tmp), files, file_bytes)
        files_row = compare(
            f"sha256_files {files} files, {total_mb:,.0f} MB",
            lambda: sha256_files_reference(paths),
            lambda: docent_native.sha256_files(paths),
            repeats,
        )
    blob = os.urandom(64 << 20)
    bytes_row = compare(
        "sha256_bytes 64 MB",
        lambda: sha256_bytes_reference(blob),
        lambda: docent_native.sha256_bytes(blob),
        repeats,
    )
    if hashlib.sha256(blob).hexdigest() != docent_native.sha256_bytes(blob):
        raise SystemExit("sha256_bytes disagrees with hashlib")
    return [files_row, bytes_row]


VOCABULARY = (
    "dose patient aspirin tablet daily adult child kidney liver risk study trial effect report "
    "table figure section value measure result method sample group control week month level "
    "increase decrease heart blood pressure treatment therapy clinical evidence data analysis "
    "the of and to in for with on by as at from is was are were be this that it an"
).split()


def make_block(rng: random.Random, words: int) -> str:
    """Prose of about ``words`` words: sentences of 8-20 words, some with
    abbreviations and decimals so the splitter's exceptions are exercised."""
    sentences = []
    total = 0
    while total < words:
        n = rng.randint(8, 20)
        body = [rng.choice(VOCABULARY) for _ in range(n)]
        if rng.random() < 0.2:
            body.insert(rng.randint(1, n - 1), rng.choice(["e.g.", "approx.", "Fig.", "3.5", "Dr."]))
        sentences.append(" ".join(body).capitalize() + rng.choice([".", ".", ".", "?", "!"]))
        total += n
    return " ".join(sentences)


def make_answer(rng: random.Random, blocks: Sequence[str], sentences: int) -> str:
    """An LLM-style answer: each sentence cites 1-2 blocks (marker before or
    after the period), every third one quotes six words of its first cited
    block (upper-cased, so the check must normalise case)."""
    out = []
    for i in range(sentences):
        cited = sorted(rng.sample(range(1, len(blocks) + 1), rng.randint(1, 2)))
        body = " ".join(rng.choice(VOCABULARY) for _ in range(rng.randint(8, 16))).capitalize()
        if i % 3 == 0:
            words = blocks[cited[0] - 1].split()
            starts = [j for j in range(len(words) - 6) if all(w.isalpha() for w in words[j : j + 6])]
            at = rng.choice(starts)
            body += f' and "{" ".join(words[at : at + 6]).upper()}"'
        marker = "[" + ", ".join(map(str, cited)) + "]"
        out.append(f"{body} {marker}." if i % 2 else f"{body}. {marker}")
    return " ".join(out)


FACTS = (
    "$45,000,000", "45 million", "October 1, 2024", "2024-10-01", "TechCorp", "ack_delay_exponent", "v1.2.3",
    "Northwind", "12%", "3 days", "`max_idle_timeout`", "RFC 9000", "Sarah Chen", "twenty-five",
)


def season(rng: random.Random, block: str) -> str:
    """A block with a fact after every fifth word, as contracts and specs read."""
    words = block.split()
    for at in range(len(words) - 1, 0, -5):
        words.insert(at, rng.choice(FACTS))
    return " ".join(words)


def make_claims_answer(rng: random.Random, blocks: Sequence[str], sentences: int) -> str:
    """Sentences of 8-16 words citing one block, each with two facts, one in
    three negated; a quarter of the facts invented (not in the block)."""
    out = []
    for _ in range(sentences):
        cited = rng.randint(1, len(blocks))
        body = [rng.choice(VOCABULARY) for _ in range(rng.randint(8, 16))]
        for _ in range(2):
            fact = rng.choice(FACTS) if rng.random() < 0.75 else f"${rng.randint(100, 999)},{rng.randint(100, 999)}"
            body.insert(rng.randint(1, len(body)), fact)
        if rng.random() < 0.33:
            body.insert(2, "not")
        out.append(" ".join(body).capitalize() + f" [{cited}].")
    return " ".join(out)


def bench_text(repeats: int) -> list[Row]:
    rng = random.Random(7)
    blocks = [make_block(rng, 300) for _ in range(10)]
    answer = make_answer(rng, blocks, 12)
    rows = [
        compare(
            "validate_citations 12 sentences vs 10x300 words",
            partial(validate_citations_reference, answer, blocks),
            partial(docent_native.validate_citations, answer, blocks),
            repeats,
        )
    ]
    seasoned = [season(rng, block) for block in blocks]
    claims = make_claims_answer(rng, seasoned, 12)
    rows.append(
        compare(
            "check_claims 12 sentences vs 10x300 words with facts",
            partial(check_claims_reference, claims, seasoned),
            partial(docent_native.check_claims, claims, seasoned),
            repeats,
        )
    )
    ranked = [make_block(rng, 400) for _ in range(20)]
    query = "What daily aspirin dose is safe for an adult patient with kidney risk?"
    rows.append(
        compare(
            "select_evidence_sentences 20x400 words",
            partial(select_evidence_sentences_reference, query, ranked),
            partial(docent_native.select_evidence_sentences, query, ranked),
            repeats,
        )
    )
    similarities = [rng.uniform(0.1, 0.9) for _ in range(10_000)]
    rows.append(
        compare(
            "evidence_contrast 10,000 values",
            partial(evidence_contrast_reference, similarities),
            partial(docent_native.evidence_contrast, similarities),
            repeats,
        )
    )
    return rows


def format_table(rows: Sequence[Row]) -> str:
    width = max(len(r.name) for r in rows)
    lines = [f"{'benchmark':<{width}}  {'python ms':>10}  {'native ms':>10}  {'speed-up':>8}"]
    lines.append("-" * len(lines[0]))
    for r in rows:
        lines.append(f"{r.name:<{width}}  {r.python_ms:>10.2f}  {r.native_ms:>10.2f}  {r.speedup:>7.1f}x")
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m eval.bench_native", description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON instead of a table")
    parser.add_argument("--candidates", type=int, default=10_000, help="candidates per ranking")
    parser.add_argument("--overlap", type=float, default=0.5, help="share of candidates common to all rankings")
    parser.add_argument("--files", type=int, default=200, help="number of files to hash")
    parser.add_argument("--file-mb", type=float, default=1.0, help="size of each file in MiB")
    parser.add_argument("--repeats", type=int, default=5, help="timed runs per side (best is reported)")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    rows = bench_fusion(args.candidates, args.overlap, args.repeats)
    rows += bench_hashing(args.files, args.file_mb, args.repeats)
    rows += bench_text(args.repeats)
    if args.json:
        payload = {
            "cpus": os.cpu_count(),
            "repeats": args.repeats,
            "results": [asdict(r) | {"speedup": round(r.speedup, 3)} for r in rows],
        }
        print(json.dumps(payload, indent=2))
    else:
        print(f"docent_native {docent_native.__version__} vs Python reference, {os.cpu_count()} CPUs, "
              f"best of {args.repeats}")
        print(format_table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
