"""Build the Debian Reference known-item benchmark ("debref") from Debian's debian-reference-* packages.

    python -m eval.debref.build [--debs DIR] [--out eval/debref]   # DIR: `make setup-debref`

What it does (deterministic; no timestamps in any output):

1. Reads each pinned .deb directly (ar + tar, testkit/debs.py), checks its sha256
   against `PACKAGES`, and writes the chapters in `CHAPTERS` byte for byte to
   `<out>/corpus/<lang>/` (git-ignored: rebuilt, never edited).
2. Splits every chapter into sections at the DocBook titles (`<h2|h3|h4 class="title">
   <a id="..."/>`). Section ids are the same in every translation, which aligns the
   languages without any translation step.
3. For every section whose title is plain prose (no `<code>`) in English, picks its
   first `<code class="literal">` string (a command, a file path, an option) that
   - occurs in the body of that section in every language,
   - occurs in no other section of the corpus of any language (whitespace-normalised,
     case-insensitive, as the harness matches),
   - is at least 4 characters and does not occur in the section's title.
   It is the answer-bearing string: language-independent, so the same row works in
   every language.
4. Writes the gold rows: `<lang>.jsonl` (monolingual: the section title in that
   language over that language's documents) and `xl-<lang>.jsonl` for every
   language but English (cross-lingual: the English title over the translation).
"""

from __future__ import annotations

import argparse
import hashlib
import html
import json
import re
import sys
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from testkit.debs import DEBREF_VERSION, debref_dir, deb_files

#: Languages of the benchmark and the sha256 of each pinned package (debian-reference 2.100, Debian 12).
PACKAGES = {
    "en": "9f31d3a17df505de09689ca255512ea58c1fc47c59bb1b0c7bf1c23362e9743f",
    "de": "3b0ce65fd63e75ddf8eb07ca36293425135080e690a07e06a6ac8bc8040ef0aa",
    "fr": "01424cba9bfa2e13166da22d3d692d33a22ec7d8ef935ec81fd8802746087f65",
    "ja": "f67140e0b994409413bd5fcc8dfcce832445c99d724401f0275fa238daf30325",
    "zh-cn": "6d2d8d9a646397e28b04cdff23d2e4374101ebf9be348e35961af62c8a2d0977",
}
#: Chapters used: system initialisation, authentication, network setup, data management tips are
#: long enough to hold hard distractors and short enough that e5 (about 150 tokens/s on 2 shared
#: cores) indexes them in minutes.
CHAPTERS = ("ch03", "ch04", "ch05", "ch08")
ROOT = "usr/share/debian-reference/"
MIN_LITERAL = 4
_TITLE = re.compile(r'<h([2-4]) class="title"><a id="([^"]+)"\s*/?>(?:</a>)?(.*?)</h\1>', re.S)
_LITERAL = re.compile(r'<code class="literal">(.*?)</code>', re.S)
_NUMBER = re.compile(r"^\s*[\d.]+\s*")


class _Text(HTMLParser):
    """Visible text of an HTML fragment (scripts and styles dropped)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style"):
            self._skip += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style") and self._skip:
            self._skip -= 1

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.parts.append(data)


def text_of(fragment: str) -> str:
    parser = _Text()
    parser.feed(fragment)
    parser.close()
    return " ".join("".join(parser.parts).split())


@dataclass(frozen=True)
class Section:
    sid: str
    title_html: str
    title: str  # number prefix removed
    body_html: str
    body: str  # visible text, normalised
    source: str  # corpus file name


def sections(page: str, name: str) -> list[Section]:
    found = list(_TITLE.finditer(page))
    out = []
    for i, match in enumerate(found):
        end = found[i + 1].start() if i + 1 < len(found) else len(page)
        body_html = page[match.end():end]
        title = _NUMBER.sub("", text_of(match.group(3)))
        out.append(Section(match.group(2), match.group(3), title, body_html, text_of(body_html), name))
    return out


def read_packages(debs: Path) -> tuple[dict[str, dict[str, bytes]], dict[str, str]]:
    files: dict[str, dict[str, bytes]] = {}
    digests: dict[str, str] = {}
    for lang, expected in PACKAGES.items():
        deb = debs / f"debian-reference-{lang}_{DEBREF_VERSION}_all.deb"
        if not deb.is_file():
            raise SystemExit(f"missing {deb}: run `make setup-debref`")
        digest = hashlib.sha256(deb.read_bytes()).hexdigest()
        if digest != expected:
            raise SystemExit(f"{deb}: sha256 {digest} is not the pinned {expected}")
        digests[lang] = digest
        pages = deb_files(deb, ROOT)
        files[lang] = {f"{ch}.{lang}.html": pages[f"{ROOT}{ch}.{lang}.html"] for ch in CHAPTERS}
    return files, digests


def choose_rows(by_lang: dict[str, dict[str, Section]]) -> list[tuple[str, str]]:
    """(section id, literal) pairs, in English document order."""
    corpus_text = {lang: " ".join(s.body for s in secs.values()).lower() for lang, secs in by_lang.items()}
    rows = []
    for sid, section in by_lang["en"].items():
        if "<code" in section.title_html or not all(sid in secs for secs in by_lang.values()):
            continue
        for raw in _LITERAL.findall(section.body_html):
            literal = " ".join(html.unescape(re.sub(r"<[^>]+>", "", raw)).split())
            key = literal.lower()
            if len(literal) < MIN_LITERAL or not re.search(r"[a-z/._-]", key):
                continue
            if any(key in secs[sid].title.lower() for secs in by_lang.values()):
                continue
            ok = all(key in secs[sid].body.lower() and corpus_text[lang].count(key) == secs[sid].body.lower().count(key)
                     for lang, secs in by_lang.items())
            if ok:
                rows.append((sid, literal))
                break
    return rows


def build(debs: Path, out: Path) -> dict[str, object]:
    files, digests = read_packages(debs)
    by_lang: dict[str, dict[str, Section]] = {}
    for lang, pages in files.items():
        folder = out / "corpus" / lang
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.glob("*.html"):
            if old.name not in pages:
                old.unlink()
        secs: dict[str, Section] = {}
        for name, data in sorted(pages.items()):
            (folder / name).write_bytes(data)
            for section in sections(data.decode("utf-8"), name):
                secs.setdefault(section.sid, section)
        by_lang[lang] = secs
    rows = choose_rows(by_lang)
    for lang, secs in by_lang.items():
        mono = [_row(f"debref_{lang}_{i:03d}", secs[sid].title, literal, secs[sid].source, lang, "monolingual")
                for i, (sid, literal) in enumerate(rows, start=1)]
        _write(out / f"{lang}.jsonl", mono)
        if lang != "en":
            cross = [_row(f"debref_xl_{lang}_{i:03d}", by_lang["en"][sid].title, literal, secs[sid].source, lang,
                          "cross-lingual") for i, (sid, literal) in enumerate(rows, start=1)]
            _write(out / f"xl-{lang}.jsonl", cross)
    return {"rows_per_set": len(rows), "languages": list(PACKAGES), "chapters": list(CHAPTERS),
            "packages": {lang: f"debian-reference-{lang}_{DEBREF_VERSION}_all.deb sha256 {d}"
                         for lang, d in digests.items()}}


def _row(rid: str, query: str, literal: str, source: str, lang: str, kind: str) -> dict[str, object]:
    return {"id": rid, "corpus": f"debref-{lang}", "query": query, "expected": [literal], "match": "any",
            "source": source, "dimensions": {"language": lang, "kind": kind}}


def _write(path: Path, rows: list[dict[str, object]]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval.debref.build", description=__doc__.split("\n")[0])
    parser.add_argument("--debs", type=Path, default=None, help="folder of the .debs (default: make setup-debref's)")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent)
    args = parser.parse_args(argv)
    report = build(args.debs or debref_dir(), args.out)
    sys.stdout.write(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
