"""Re-verify every answer-set row against the corpora; exit 1 with the reasons if any row is wrong.

    python -m eval.answer_sets.check --data-dir ../shared/eval-data
    python -m eval.answer_sets.check --data-dir ../shared/eval-data --set negation

Per row: the expected strings occur (in the row's `source` document when it
names one; case-insensitive except in case-sensitive corpora) and are short
and free of Markdown markup, so they read the same before and after parsing;
a numeric row's `value` is in its expected string; a negation row's expected
sentence has the polarity the row claims (the judge's own cue list); every
`absent` term of an unanswerable row occurs nowhere in the corpus, as a whole
word, in any case; and no query is copied from the corpus. The sets must also
keep their size: ≥ 40 unanswerable rows over all six corpora, ≥ 20 negative
negation rows, ≥ 20 numeric rows.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from eval.answer_sets import SETS, AnswerRow, AnswerSetError, load_sets
from eval.answer_sets.corpus_text import CorpusText, read_corpus
from eval.corpora import Corpus, known_corpora
from eval.judge.facts import extract_facts, phrase_pattern
from eval.judge.polarity import is_negative

CORPORA = ("acq", "atlas7", "hr", "docs", "rfc", "pydocs")
MAX_EXPECTED_CHARS = 200
MARKUP = set("`*[]|#~<>")
MINIMUM = {"unanswerable": 40, "negation": 20, "numeric": 20}


@dataclass
class Report:
    checked: int = 0
    problems: list[str] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)

    def fail(self, row: AnswerRow, why: str) -> None:
        self.problems.append(f"{row.id}: {why}")


def check_row(row: AnswerRow, corpus: Corpus, text: CorpusText, report: Report) -> None:
    report.checked += 1
    for expected in row.expected:
        where = text.containing(expected, corpus.case_sensitive)
        if not where:
            report.fail(row, f"expected {expected!r} occurs nowhere in {corpus.name}")
        elif row.source and row.source not in where:
            report.fail(row, f"expected {expected!r} is not in its source {row.source} (found in {where[:3]})")
        if len(expected) > MAX_EXPECTED_CHARS:
            report.fail(row, f"expected is {len(expected)} characters; keep it under {MAX_EXPECTED_CHARS}")
        if MARKUP & set(expected):
            report.fail(row, f"expected {expected!r} holds Markdown markup ({''.join(sorted(MARKUP & set(expected)))})")
    if row.kind == "numeric" and row.value and not _value_in(row.value, row.expected):
        report.fail(row, f"value {row.value!r} is not in its expected string")
    if row.kind == "negation":
        negative = [is_negative(e) for e in row.expected]
        if any(neg != (row.polarity == "negative") for neg in negative):
            report.fail(row, f"expected sentence's polarity is not {row.polarity} by the judge's cues")
    for term in row.absent:
        hits = text.word_hits(term)
        if hits:
            report.fail(row, f"absent term {term!r} occurs in {corpus.name}: {hits[:3]}")
    query = " ".join(row.query.lower().rstrip("?").split())
    if any(query in doc for doc in text.lowered.values()):
        report.fail(row, "the query is copied from the corpus; write it as a user would")
    report.counts[f"{row.kind}/{row.corpus}"] += 1


def _value_in(value: str, expected: tuple[str, ...]) -> bool:
    if any(phrase_pattern(value).search(e) for e in expected):
        return True
    wanted = {f.value for f in extract_facts(f"It is {value}.") if f.kind == "number"}
    stated = {f.value for e in expected for f in extract_facts(e) if f.kind == "number"}
    return bool(wanted) and wanted <= stated


def check_sets(rows: list[AnswerRow], data_dir: Path, names: tuple[str, ...]) -> Report:
    report = Report()
    known = known_corpora(data_dir)
    seen_ids: Counter[str] = Counter(r.id for r in rows)
    seen_queries: Counter[str] = Counter(r.query.strip().lower() for r in rows)
    for row in rows:
        if seen_ids[row.id] > 1:
            report.fail(row, "duplicate id")
        if seen_queries[row.query.strip().lower()] > 1:
            report.fail(row, "duplicate query")
        corpus = known.get(row.corpus)
        if corpus is None or row.corpus not in CORPORA:
            report.fail(row, f"unknown corpus {row.corpus!r}; one of {', '.join(CORPORA)}")
            continue
        missing = [str(s) for s in corpus.sources if not s.exists()]
        if missing:
            report.problems.append(f"missing corpus data: {', '.join(missing)}")
            return report
        check_row(row, corpus, read_corpus(corpus.sources), report)
    _check_sizes(rows, names, report)
    return report


def _check_sizes(rows: list[AnswerRow], names: tuple[str, ...], report: Report) -> None:
    by_kind = Counter(r.kind for r in rows if r.kind != "negation" or r.polarity == "negative")
    for kind in names:
        if by_kind[kind] < MINIMUM[kind]:
            report.problems.append(f"set {kind}: {by_kind[kind]} rows, needs at least {MINIMUM[kind]}"
                                   + (" negative ones" if kind == "negation" else ""))
    if "unanswerable" in names:
        covered = {r.corpus for r in rows if r.kind == "unanswerable"}
        if set(CORPORA) - covered:
            report.problems.append(f"set unanswerable: no rows for {', '.join(sorted(set(CORPORA) - covered))}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m eval.answer_sets.check", description=__doc__.split("\n")[0])
    p.add_argument("--data-dir", type=Path, default=Path("../shared/eval-data"))
    p.add_argument("--set", dest="sets", action="append", choices=SETS, help="check only this set (repeatable)")
    args = p.parse_args(argv)
    names = tuple(args.sets or SETS)
    try:
        rows = load_sets(names)
    except AnswerSetError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 1
    report = check_sets(rows, args.data_dir, names)
    for key, count in sorted(report.counts.items()):
        sys.stdout.write(f"{key:<24} {count:>3}\n")
    sys.stdout.write(f"{report.checked} rows checked, {len(report.problems)} problems\n")
    for problem in report.problems:
        sys.stdout.write(f"FAIL {problem}\n")
    return 1 if report.problems else 0


if __name__ == "__main__":
    sys.exit(main())
