"""The known evaluation corpora under `--data-dir` and how to load any gold file.

Data is read where it lies (`../shared/eval-data` by default); nothing is
copied into the repository.
"""

from __future__ import annotations

import json
import argparse
from dataclasses import dataclass
from pathlib import Path

from eval.metrics import GoldRow


@dataclass(frozen=True)
class Corpus:
    name: str
    sources: tuple[Path, ...]  # files or folders to index
    gold: tuple[Path, ...]  # jsonl files whose rows are evaluated
    case_sensitive: bool = False
    index_as: str = ""  # corpora over the same documents share one cached index under this name


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
        **debref_corpora(),
    }


def build_sources(data_dir: Path, docs: Path | None = None) -> list[Path]:
    """What the indexing benchmarks build: `docs` when given, else every localGPT corpus."""
    if docs:
        return [docs]
    corpora = data_dir / "localgpt" / "corpora"
    return [corpora / "rfc", corpora / "docs", corpora / "acquisition",
            corpora / "atlas7_service_manual.pdf", corpora / "northwind_leave_policy.pdf"]


ALL = ("atlas7", "hr", "docs", "mixed", "acq", "acq+docs", "rfc", "pydocs")

#: The Debian Reference sets (eval/debref/build.py generates the corpus; the gold rows are committed).
DEBREF_DIR = Path(__file__).resolve().parent / "debref"
DEBREF_LANGUAGES = ("en", "de", "fr", "ja", "zh-cn")
DEBREF = tuple(f"debref-{lang}" for lang in DEBREF_LANGUAGES) + \
    tuple(f"debref-xl-{lang}" for lang in DEBREF_LANGUAGES if lang != "en")


def debref_corpora(folder: Path = DEBREF_DIR) -> dict[str, Corpus]:
    """Monolingual sets (question and documents in one language) and cross-lingual ones (English
    questions over a translation); a cross-lingual set searches the same index as its monolingual one."""
    out: dict[str, Corpus] = {}
    for lang in DEBREF_LANGUAGES:
        docs = folder / "corpus" / lang
        out[f"debref-{lang}"] = Corpus(f"debref-{lang}", (docs,), (folder / f"{lang}.jsonl",),
                                       index_as=f"debref-{lang}")
        if lang != "en":
            out[f"debref-xl-{lang}"] = Corpus(f"debref-xl-{lang}", (docs,), (folder / f"xl-{lang}.jsonl",),
                                              index_as=f"debref-{lang}")
    return out


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


def add_corpus_arguments(parser: argparse.ArgumentParser, corpora: tuple[str, ...]) -> None:
    """The options every harness shares: which data, where the index cache lives, settings overrides."""
    parser.add_argument("--data-dir", type=Path, default=Path("../shared/eval-data"))
    parser.add_argument("--corpus", choices=corpora, help="a known corpus")
    parser.add_argument("--docs", type=Path, help="your own folder of documents")
    parser.add_argument("--gold", type=Path, help="your own gold file (jsonl: id, query, expected, match)")
    parser.add_argument("--case-sensitive", action="store_true", help="relevance without lower-casing (--gold)")
    parser.add_argument("--limit", type=int, default=0, help="evaluate only the first N rows")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="override a setting (e.g. chunk_tokens=256); repeatable")
    parser.add_argument("--cache-dir", type=Path, default=Path("eval/.cache"))
    parser.add_argument("--json-out", type=Path)
    parser.add_argument("-v", "--verbose", action="store_true")


def check_corpus_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    if bool(args.docs) != bool(args.gold):
        parser.error("--docs and --gold go together")
    if not args.corpus and not args.docs:
        parser.error("give --corpus or --docs/--gold")
