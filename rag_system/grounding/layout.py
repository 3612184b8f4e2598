"""How a passage's text is cut before it is parsed: one line, and one piece per field or list item.

Why: the documents people ask about are full of forms ("Filing Date: January 10, 2025 Transaction
Value: $45,000,000"), numbered findings run together on one line ("4.1 23 contracts reviewed 4.2 3
contracts contain ...") and inline bullets. The parser reads such a line as one sentence and binds
words across its fields, so each field and item is parsed on its own: a fact of one item must not
lend its words to the next. Claims are cut the same way, so a sentence quoted from a form reads as
its source does.
"""

from __future__ import annotations

import re

#: Markdown emphasis and code marks ("It is **not** ...", "`lru_cache`"): not words.
_EMPHASIS = re.compile(r"\*\*|__|`|(?<!\w)\*(?=\w)|(?<=\w)\*(?!\w)")
#: A word broken at a line end, its hyphen kept ("ack- eliciting").
_BROKEN = re.compile(r"(?<=[a-z])- (?=[a-z])")
#: A manual page's section after a command ("aptitude(8)", "sudo(8)").
_MAN_SECTION = re.compile(r"(?<=[a-z])\(\d[a-z]?\)")

#: "Filing Date: January 10, 2025 Transaction Value: $45,000,000": where a label of capitalised
#: words and a colon starts a new field of a form or a data sheet (each is a fact of its own). A
#: label inside quotes is a value ("archives with "NotAutomatic: yes"").
_FIELD = re.compile(r"(?<![\w&/().'’\"“-])(?:[A-Z][\w&/().'’-]*\s+){0,4}[A-Z][\w&/().'’-]*:(?=\s)")
#: Words that end a name rather than start a label ("Morrison & Associates LLP Seller's Counsel:").
_NAME_ENDS = frozenset("llp llc lp inc inc. ltd ltd. corp corp. co co. gmbh plc ag sa".split())
#: A bullet inside a line ("... clause - MegaCorp represents 28% ..."): a list item of its own.
_BULLET = re.compile(r"\s[-\u2022*]\s+(?=[A-Z0-9$])")
#: A dash after a reference is part of its title, not a bullet ("Schedule 3 - Employee Transition
#: Plan", "Exhibit A - Financial Terms").
_REFERENCE = re.compile(r"\b[A-Z][a-z]+\s+(?:\d+(?:\.\d+)*|[A-Z])$")
#: A semicolon between two statements: each is parsed as a sentence of its own (the small parser
#: often takes the second for a complement of the first).
_CLAUSE_BREAK = re.compile(r";\s+(?=\S)")
#: A numbered item or section inside a line ("... reviewed 4.2 3 contracts ...", "... 5. REGULATORY").
_ITEM = re.compile(r"(?:(?<=\s)|^)(\d{1,2})\.(\d{1,2})?\s+(?=[A-Z0-9$\"“(])")


def plain(text: str) -> str:
    """Text as the parser reads it: one line, without Markdown emphasis or manual sections, broken
    words joined."""
    return _BROKEN.sub("-", " ".join(_MAN_SECTION.sub("", _EMPHASIS.sub("", text)).split()))


def fields(sentence: str, numbers: frozenset[tuple[int, int | None]] | None = None, claim: bool = False) -> list[str]:
    """A sentence cut into the fields of a form ("Label: value Label: value"), its numbered items
    and its inline bullets; itself otherwise. `numbers`: the item numbers of the whole text the
    sentence comes from (`item_numbers`), so an item whose neighbours are in other sentences is
    cut too. A claim is cut at its semicolons as well: its statements are checked one by one, where
    a source's are kept together (a clause after its semicolon may lend to the one before)."""
    labels = [_label_start(sentence, m) for m in _FIELD.finditer(sentence)]
    # A label starts a new field only after another field ("Date: ... Location: ..."), not after
    # the words that introduce it ("1.1 Revenue for FY2024: $12.3 million").
    cuts = {a for a, before in zip(labels[1:], labels) if a > before} | \
        {a for a in labels[:1] if a > 0 and ":" in sentence[:a]}
    cuts |= {m.start() for m in _BULLET.finditer(sentence)
             if not _in_brackets(sentence, m.start()) and not _REFERENCE.search(sentence[:m.start()])}
    cuts |= _items(sentence, item_numbers(sentence) if numbers is None else numbers)
    if claim:
        cuts |= {m.end() for m in _CLAUSE_BREAK.finditer(sentence) if not _in_brackets(sentence, m.start())}
    parts, last = [], 0
    for cut in sorted(cuts):
        if sentence[last:cut].strip(" -\u2022*;"):
            parts.append(sentence[last:cut].strip(" -\u2022*").rstrip(" ;"))
            last = cut
    parts.append(sentence[last:].strip(" -\u2022*"))
    return [p for p in parts if p] or [sentence]


def _label_start(sentence: str, match: re.Match[str]) -> int:
    """Where a label starts: its capitalised words, less those that end the value before it (a
    company's "LLP", the words of a name joined by "&")."""
    start = match.start()
    words = list(re.finditer(r"\S+", match.group()))
    for i, word in enumerate(words[:-1]):
        before = sentence[:start + word.start()].rstrip()
        if word.group().lower() in _NAME_ENDS or before.endswith("&") or word.group() == "&":
            start = match.start() + words[i + 1].start()
    return start


def _in_brackets(text: str, at: int) -> bool:
    return text.count("(", 0, at) > text.count(")", 0, at)


def item_numbers(text: str) -> frozenset[tuple[int, int | None]]:
    """The numbers of the items a text may be cut at: (4, 2) for "4.2 ...", (5, None) for "5. ..."."""
    return frozenset((int(m.group(1)), int(m.group(2)) if m.group(2) else None) for m in _ITEM.finditer(text))


def _items(sentence: str, numbers: frozenset[tuple[int, int | None]]) -> set[int]:
    """Starts of numbered items: "4.2" where "4.1" or "4.3" is also in the text, "5." where "4.x"
    or "6." is; numbers that do not continue a sequence are values ("Python 3.8")."""
    found = [(m.start(), int(m.group(1)), int(m.group(2)) if m.group(2) else None) for m in _ITEM.finditer(sentence)]
    cuts = set()
    for at, major, minor in found:
        if minor is not None:
            continues = bool({(major, minor - 1), (major, minor + 1), (major, None)} & numbers)
        else:
            continues = bool({(major - 1, None), (major + 1, None), (major, 1)} & numbers) or \
                any(a == major - 1 and b is not None for a, b in numbers)
        if continues and at > 0 and not _in_brackets(sentence, at):
            cuts.add(at)
    return cuts
