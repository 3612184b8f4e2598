"""The chunker's and packer's sentences: `docent_native.split_sentences`, as verbatim substrings.

Chunks overlap by whole sentences and citations quote sentences verbatim, so
there is one splitter for both: the native one the validator and the grounding
code use (rules in native/docent_native.pyi; the abbreviations it never ends a
sentence after are `common.lexicon.ABBREVIATIONS`). A chunk boundary and a
citation's sentence therefore always agree.
"""

from __future__ import annotations

import docent_native


def split_sentences(text: str) -> list[str]:
    """Split `text` into sentences; each one is a verbatim, whitespace-trimmed substring, in order."""
    return [text[start:end] for start, end in docent_native.split_sentences(text)]
