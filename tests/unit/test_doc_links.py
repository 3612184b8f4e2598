"""Every relative link in README.md and Documentation/ resolves: the file exists and, where the link
names a heading (`page.md#anchor`), the page has that heading, so a page that moves or renames a
section cannot leave readers at a dead end."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

from testkit import REPO_ROOT

LINK = re.compile(r"\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^()\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^(```|~~~)")


def _pages() -> list[Path]:
    return [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "Documentation").rglob("*.md"))]


def _prose(text: str) -> str:
    """The page without its fenced code blocks and inline code, where a bracket is not a link."""
    kept, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line.strip()):
            fenced = not fenced
            continue
        if not fenced:
            kept.append(re.sub(r"`[^`]*`", "", line))
    return "\n".join(kept)


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: markup dropped, lower case, punctuation but - and _ removed."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "").replace("*", "")
    kept = "".join(c for c in text.lower().strip()
                   if c in " -_" or unicodedata.category(c)[0] in "LMN")
    return kept.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    anchors = set()
    in_fence = False
    for line in page.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line.strip()):
            in_fence = not in_fence
        match = None if in_fence else re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if match:
            slug = _slug(match.group(1))
            anchors.add(f"{slug}-{seen[slug]}" if slug in seen else slug)
            seen[slug] = seen.get(slug, 0) + 1
    return anchors


def broken_links(page: Path) -> list[str]:
    broken = []
    for target in LINK.findall(_prose(page.read_text(encoding="utf-8"))):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        if not resolved.exists():
            broken.append(f"{target}: no such file")
        elif anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved):
            broken.append(f"{target}: no heading with that anchor")
    return broken


def test_slug_follows_github() -> None:
    assert _slug("A million chunks (`python -m eval.bench_scale_1m`, issue 22)") == \
        "a-million-chunks-python--m-evalbench_scale_1m-issue-22"
    assert _slug("Issue 18: before and after (2026-12-02)") == "issue-18-before-and-after-2026-12-02"
    assert _slug("The cross-encoder's order: alone, or blended") == "the-cross-encoders-order-alone-or-blended"


def test_a_broken_link_is_found(tmp_path: Path) -> None:
    (tmp_path / "there.md").write_text("# Here it is\n", encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text("[ok](there.md#here-it-is) [gone](missing.md) [moved](there.md#elsewhere)\n"
                    "```\n[not a link](nowhere.md)\n```\n", encoding="utf-8")
    assert broken_links(page) == ["missing.md: no such file", "there.md#elsewhere: no heading with that anchor"]


def test_every_relative_link_resolves() -> None:
    broken = {str(page.relative_to(REPO_ROOT)): found for page in _pages() if (found := broken_links(page))}
    assert not broken, broken
