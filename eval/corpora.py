"""The known evaluation corpora under `--data-dir` and how to load any gold file.

Data is read where it lies (`../shared/eval-data` by default); nothing is
copied into the repository.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from eval.metrics import GoldRow


@dataclass(frozen=True)
class Corpus:
    name: str
    sources: tuple[Path, ...]  # files or folders to index
    gold: tuple[Path, ...]  # jsonl files whose rows are evaluated
    case_sensitive: bool = False


def known_corpora(data_dir: Path) -> dict[str, Corpus]:
    lg = data_dir / "localgpt"
    c, g = lg / "corpora", lg / "goldset"
    atlas = c / "atlas7_service_manual.pdf"
    hr = c / "northwind_leave_policy.pdf"
    docs, acq, rfc = c / "docs", c / "acquisition", c / "rfc"
    return {
        "atlas7": Corpus("atlas7", (atlas,), (g / "atlas7.jsonl",)),
        "hr": Corpus("hr", (hr,), (g / "hr.jsonl",)),
        "docs": Corpus("docs", (docs,), (g / "docs.jsonl",)),
        "mixed": Corpus("mixed", (atlas, hr, docs), (g / "atlas7.jsonl", g / "hr.jsonl", g / "docs.jsonl")),
        "acq": Corpus("acq", (acq,), (g / "acquisition.jsonl",)),
        "acq+docs": Corpus("acq+docs", (acq, docs), (g / "acquisition.jsonl",)),
        "rfc": Corpus("rfc", (rfc,), (g / "rfc.jsonl",)),
        "pydocs": Corpus("pydocs", (data_dir / "pydocs" / "corpus",), (data_dir / "pydocs" / "dev.jsonl",),
                         case_sensitive=True),
    }


ALL = ("atlas7", "hr", "docs", "mixed", "acq", "acq+docs", "rfc", "pydocs")


def custom_corpus(docs: Path, gold: Path, case_sensitive: bool) -> Corpus:
    return Corpus(docs.name or "custom", (docs,), (gold,), case_sensitive)


class GoldFileError(ValueError):
    """A gold file row is malformed; the message names file and line."""


def load_gold(paths: tuple[Path, ...]) -> list[GoldRow]:
    rows: list[GoldRow] = []
    for path in paths:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            try:
                raw = json.loads(line)
                expected = raw["expected"]
                if isinstance(expected, str):
                    expected = [expected]
                if not raw["query"] or not expected:
                    raise ValueError("empty query or expected")
                match = raw.get("match", "any")
                if match not in ("any", "all"):
                    raise ValueError(f"match must be any or all, got {match!r}")
                dims = raw.get("dimensions") or {}
                rows.append(GoldRow(
                    id=str(raw.get("id", f"{path.stem}:{number}")), query=str(raw["query"]),
                    expected=tuple(str(e) for e in expected), match=match,
                    dimensions=tuple(sorted((str(k), str(v)) for k, v in dims.items())),
                ))
            except (KeyError, ValueError, TypeError) as exc:
                raise GoldFileError(f"{path}:{number}: {exc}") from exc
    return rows
