"""Hand-written answer dev sets: unanswerable, negation and numeric questions over the shared corpora.

The gold sets measure whether an answer cites the fact; these measure whether
an answer can be trusted: refusing what the documents do not say, not
flipping a documented "not", not stating a number its citation lacks. Each
row names its corpus (a key of `eval.corpora.known_corpora`), so one set spans
all six corpora and `eval.run_answers` answers each row over its own index.

Row format (JSONL, one object per line; the gold-set style plus what the judge needs):

- every row: `id`, `corpus`, `kind` (`unanswerable` | `negation` | `numeric`), `query`
- unanswerable: `category`, `why_unanswerable`, `absent` (fact words that occur nowhere in the corpus)
- negation: `expected` (the exact sentence substring that answers), `polarity` (`negative` | `positive`)
- numeric: `expected` (exact substring), `value` (the number, amount, date or version as stated)
- optional: `source` (the document that holds `expected`), `match` (`any` | `all`, default `any`)

`python -m eval.answer_sets.check --data-dir ../shared/eval-data` re-verifies every row against the corpora.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from eval.metrics import GoldRow

HERE = Path(__file__).resolve().parent
SETS = ("unanswerable", "negation", "numeric")
KINDS = SETS
POLARITIES = ("negative", "positive")


class AnswerSetError(ValueError):
    """A row of an answer set is malformed; the message names file and line."""


@dataclass(frozen=True)
class AnswerRow:
    id: str
    corpus: str
    kind: str
    query: str
    expected: tuple[str, ...] = ()
    match: str = "any"
    polarity: str | None = None
    value: str | None = None
    absent: tuple[str, ...] = ()
    category: str | None = None
    why_unanswerable: str | None = None
    source: str | None = None

    @property
    def answerable(self) -> bool:
        return self.kind != "unanswerable"

    def gold(self) -> GoldRow:
        """The row as the gold-set harness sees it (an unanswerable row expects nothing)."""
        return GoldRow(id=self.id, query=self.query, expected=self.expected, match=self.match)


def set_path(name: str) -> Path:
    if name not in SETS:
        raise AnswerSetError(f"unknown answer set {name!r}; known: {', '.join(SETS)}")
    return HERE / f"{name}.jsonl"


def is_answer_set_file(path: Path) -> bool:
    """True when the file's first row carries a `kind` (an answer-set row), not a plain gold row."""
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            try:
                return "kind" in json.loads(line)
            except json.JSONDecodeError:
                return False
    return False


def load_rows(path: Path, default_corpus: str | None = None) -> list[AnswerRow]:
    rows: list[AnswerRow] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append(_row(json.loads(line), default_corpus))
        except (KeyError, ValueError, TypeError) as exc:
            raise AnswerSetError(f"{path}:{number}: {exc}") from exc
    return rows


def load_sets(names: list[str] | tuple[str, ...]) -> list[AnswerRow]:
    return [row for name in names for row in load_rows(set_path(name))]


def _strings(raw: object, field: str) -> tuple[str, ...]:
    if raw is None:
        return ()
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list) or not all(isinstance(s, str) and s.strip() for s in raw):
        raise ValueError(f"{field} must be a non-empty string or a list of them")
    return tuple(raw)


def _row(raw: dict[str, object], default_corpus: str | None) -> AnswerRow:
    kind = str(raw["kind"])
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    corpus = raw.get("corpus") or default_corpus
    if not corpus or not str(raw.get("query") or "").strip():
        raise ValueError("a row needs a corpus and a query")
    row = AnswerRow(
        id=str(raw["id"]), corpus=str(corpus), kind=kind, query=str(raw["query"]),
        expected=_strings(raw.get("expected"), "expected"), match=str(raw.get("match", "any")),
        polarity=None if raw.get("polarity") is None else str(raw["polarity"]),
        value=None if raw.get("value") is None else str(raw["value"]),
        absent=_strings(raw.get("absent"), "absent"),
        category=None if raw.get("category") is None else str(raw["category"]),
        why_unanswerable=None if raw.get("why_unanswerable") is None else str(raw["why_unanswerable"]),
        source=None if raw.get("source") is None else str(raw["source"]),
    )
    if row.match not in ("any", "all"):
        raise ValueError(f"match must be any or all, got {row.match!r}")
    if kind == "unanswerable":
        if row.expected or not row.absent or not row.why_unanswerable or not row.category:
            raise ValueError("an unanswerable row has category, why_unanswerable and absent, and no expected")
    elif not row.expected:
        raise ValueError(f"a {kind} row needs expected")
    if kind == "negation" and row.polarity not in POLARITIES:
        raise ValueError(f"a negation row needs polarity {' or '.join(POLARITIES)}")
    if kind == "numeric" and not row.value:
        raise ValueError("a numeric row needs value")
    return row
