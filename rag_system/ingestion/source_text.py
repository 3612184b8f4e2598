"""Keep the source's own characters when Docling hands text back in pieces.

Two things stood between a quote and the page it came from:
1. Docling's HTML backend "cleans" text: `’`→`'`, `“ ”`→`"`, `–`/`—`→`-`,
   `…`→`...`. `keep_typography` replaces that cleaning, once per process,
   with one that only drops invisible characters and turns no-break spaces
   into spaces (a change of whitespace, which every quote check normalises).
2. A paragraph with inline markup (`<code>`, `**bold**`) arrives as stripped
   pieces, and whether a space stood between two pieces is lost: French
   `« <code>ls</code> »` came back as `«ls»`. `SourceText` finds the pieces, in
   order, in the document's own text and joins them with exactly the spacing
   found there; a piece it cannot find falls back to the spacing rules of
   `structure.join_inline`.
"""

from __future__ import annotations

import logging
import threading
import warnings
from collections.abc import Iterable
from pathlib import Path

log = logging.getLogger(__name__)

#: Characters that are invisible or pure layout: dropped, as Docling did.
_INVISIBLE = {"\u200b": "", "\u200c": "", "\u200d": "", "\u00ad": "", "\ufeff": "", "\u2060": ""}
#: No-break spaces become spaces (whitespace only; the quote checks collapse whitespace anyway).
_SPACES = {"\u00a0": " ", "\u202f": " ", "\u2007": " "}
#: How far ahead of the last match a piece is looked for before the search gives up.
_LOOKAHEAD = 20000
#: How far past the previous piece the next one may start (markup and dropped images in between).
_MAX_GAP = 200
#: Occurrences of a run's first piece tried before the search gives up.
_MAX_TRIES = 200
_PATCH_LOCK = threading.Lock()


def clean_html_text(text: str) -> str:
    """Docling's HTML clean-up without the typography rewrite (see module docstring)."""
    for raw, clean in (*_INVISIBLE.items(), *_SPACES.items()):
        text = text.replace(raw, clean)
    return text


def keep_typography() -> None:
    """Make Docling's HTML backend keep quotes, apostrophes, dashes and ellipses.

    The backend calls `HTMLDocumentBackend._clean_unicode` by class name from a
    dozen places, so a subclass cannot override it; the attribute is replaced
    instead, once, before the first conversion. Only our converter uses
    Docling's HTML backend in this process.
    """
    from docling.backend.html_backend import HTMLDocumentBackend

    with _PATCH_LOCK:
        if getattr(HTMLDocumentBackend._clean_unicode, "__docent__", False):
            return
        patched = staticmethod(clean_html_text)
        clean_html_text.__docent__ = True  # type: ignore[attr-defined]
        HTMLDocumentBackend._clean_unicode = patched  # type: ignore[method-assign]
        log.debug("Docling HTML backend: typography kept")


class SourceText:
    """The text of a source file, searched in order, to recover the spacing between inline pieces."""

    def __init__(self, text: str) -> None:
        self.text = " ".join(clean_html_text(text).split())
        self._cursor = 0

    @classmethod
    def of_html(cls, path: Path) -> SourceText | None:
        """The visible text of an HTML file (entities decoded, scripts and styles dropped)."""
        try:
            data = path.read_bytes()
        except OSError as exc:
            log.debug("no source text for %s: %s", path, exc)
            return None
        return cls.of_html_bytes(data)

    @classmethod
    def of_html_bytes(cls, data: bytes) -> SourceText | None:
        """The visible text of an HTML document held in memory (an EPUB chapter, a mail body)."""
        from bs4 import BeautifulSoup

        try:
            with warnings.catch_warnings():  # XHTML pages (DocBook output) are HTML enough for this
                warnings.simplefilter("ignore")
                soup = BeautifulSoup(data, "lxml")
        except ValueError as exc:
            log.debug("no source text: %s", exc)
            return None
        for tag in soup(["script", "style", "noscript", "template"]):
            tag.decompose()
        return cls(soup.get_text(""))

    @classmethod
    def of_markdown(cls, path: Path) -> SourceText | None:
        """A Markdown file as written: its markup marks where spaces were (`` `cfg`. `` vs `` `cfg` file``)."""
        try:
            return cls(path.read_text(encoding="utf-8-sig", errors="replace"))
        except OSError:
            return None

    def respace(self, text: str) -> str:
        """`text` with the source's own spacing between its words, when the source has it that way.

        Docling joins the runs inside one element with a space ("ip (8)" for
        `ip</span>(8)`); the words found in order with nothing or one space
        between them give back the source's spacing (and move the search on).
        Text not found so is returned as it is.
        """
        words = text.split()
        if not words:
            return text
        return self._find_run([(word, i > 0) for i, word in enumerate(words)]) or text

    def join(self, parts: Iterable[str]) -> str | None:
        """The pieces joined with the source's spacing, or None when they are not found in order.

        Between pieces anything may stand (markup, a dropped image); inside a
        piece only nothing or a space, as in `respace`.
        """
        run = [(word, i > 0) for part in parts for i, word in enumerate(part.split())]
        return self._find_run(run) if run else ""

    def _find_run(self, run: list[tuple[str, bool]]) -> str | None:
        """The tightest occurrence of the words in order after the cursor (least text between them).

        `run` holds (word, tight): a tight word follows the previous one after
        nothing or one space, any other within `_MAX_GAP` characters. A short
        first word ("ip") occurs all over a page, and the occurrence with the
        smallest gaps is the real one.
        """
        first = run[0][0]
        limit = self._cursor + _LOOKAHEAD + len(first)
        best: tuple[int, str, int] | None = None  # (gaps, joined, end)
        start = self.text.find(first, self._cursor, limit)
        tries = 0
        while start >= 0 and tries < _MAX_TRIES:
            tries += 1
            found = self._chain(run, start)
            if found is not None and (best is None or found[0] < best[0]):
                best = found
                if found[0] <= len(run) - 1:
                    break  # nothing but single spaces between the words: cannot be tighter
            start = self.text.find(first, start + 1, limit)
        if best is None:
            return None
        self._cursor = best[2]
        return best[1]

    def _chain(self, run: list[tuple[str, bool]], start: int) -> tuple[int, str, int] | None:
        """(total gap, joined text, end) of the run's words from `start` on, or None."""
        out, end, gaps = run[0][0], start + len(run[0][0]), 0
        for word, tight in run[1:]:
            at = self.text.find(word, end, end + (1 if tight else _MAX_GAP) + len(word))
            if at < 0:
                return None
            gap = self.text[end:at]
            if tight and gap not in ("", " "):
                return None
            gaps += len(gap)
            out += " " if (gap[:1].isspace() or gap[-1:].isspace()) else ""
            out += word
            end = at + len(word)
        return gaps, out, end
