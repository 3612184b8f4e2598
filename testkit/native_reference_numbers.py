"""Numbers and dates for the reference claim check (``native/src/numbers.rs``, ``dates.rs``).

Why a module of its own: ``testkit.native_reference_claims`` needs the values a
text mentions, compared exactly; this is their readable statement. Like the
Rust it follows character by character, not with regexes, so a difference
from the native side is easy to locate. Rules: ``native/docent_native.pyi``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from testkit.native_reference import _fold

# --- character classes (Python's own; the Rust side pins them) ---------------


def is_word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def is_alpha(ch: str) -> bool:
    return ch.isalpha()


def is_upper(ch: str) -> bool:
    return ch.isupper() and ch.isalnum()


def is_digit(ch: str) -> bool:
    return ch in "0123456789"


def run_end(t: Sequence[str], i: int, pred: Callable[[str], bool]) -> int:
    while i < len(t) and pred(t[i]):
        i += 1
    return i


def word_end(t: str, i: int) -> int:
    return run_end(t, i, is_word)


# --- numbers -------------------------------------------------------------------

_GROUP_SPACES = " \u00a0\u2009\u202f"
_SCALE_WORDS = {"hundred": 2, "thousand": 3, "million": 6, "billion": 9, "trillion": 12, "bn": 9, "mn": 6}
_AMBIGUOUS_SCALES = {"k": 3, "K": 3, "m": 6, "M": 6, "b": 9, "B": 9}
_NUMBER_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30,
    "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100,
    "thousand": 1000, "million": 1_000_000, "billion": 1_000_000_000, "dozen": 12, "once": 1, "twice": 2,
    "single": 1, "double": 2, "triple": 3, "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5,
    "sixth": 6, "seventh": 7, "eighth": 8,
}
_UNITS = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]


def canonical(int_digits: str, frac_digits: str, shift: int) -> str:
    """``int.frac * 10**shift`` as a canonical decimal string."""
    digits = int_digits + frac_digits
    point = len(int_digits) + shift
    digits = digits.ljust(point, "0")
    whole, rest = digits[:point].lstrip("0"), digits[point:].rstrip("0")
    return (whole or "0") + ("." + rest if rest else "")


def _groups(t: str, j: int, seps: str) -> tuple[int, int, str]:
    k, count, digits = j, 0, ""
    while (k + 3 < len(t) and t[k] in seps and all(is_digit(c) for c in t[k + 1 : k + 4])
           and not (k + 4 < len(t) and is_digit(t[k + 4]))):
        digits += t[k + 1 : k + 4]
        k += 4
        count += 1
    return count, k, digits


def parse_numeral(t: str, i: int) -> tuple[str, str, int]:
    """(integer digits, fraction digits, end) of the numeral at ``t[i]``."""
    j = run_end(t, i, is_digit)
    int_digits = t[i:j]
    decimal = "."
    if j - i <= 3:
        for seps, minimum, dec in ((",", 1, "."), (_GROUP_SPACES, 1, "."), (".", 2, ",")):
            count, k, digits = _groups(t, j, seps)
            if count >= 1:
                if count >= minimum:
                    j, int_digits, decimal = k, int_digits + digits, dec
                break
    frac = ""
    if j < len(t) and t[j] == decimal and j + 1 < len(t) and is_digit(t[j + 1]):
        e = run_end(t, j + 1, is_digit)
        frac, j = t[j + 1 : e], e
    return int_digits, frac, j


def scale_of(word: str) -> tuple[int, bool] | None:
    if word in _AMBIGUOUS_SCALES:
        return _AMBIGUOUS_SCALES[word], False
    shift = _SCALE_WORDS.get(_fold(word))
    return None if shift is None else (shift, True)


def numeral_values(t: str, numeral: tuple[str, str, int], s: int) -> tuple[list[str], int]:
    """Candidate values of a numeral and the end of its span (letters end at ``s``)."""
    int_digits, frac, num_end = numeral
    raw = canonical(int_digits, frac, 0)
    scale = None
    if s > num_end:
        scale, end = scale_of(t[num_end:s]), s
    else:
        k = run_end(t, num_end, str.isspace)
        end = num_end
        found = False
        if k > num_end and k < len(t) and is_word(t[k]):
            r = word_end(t, k)
            scale = scale_of(t[k:r])
            if scale is not None:
                end, found = r, True
        if not found and num_end < len(t) and t[num_end] == "%":
            end = num_end + 1
        elif not found:
            end = _percent_end(t, num_end, k)
    if scale is None:
        return [raw], end
    shift, sure = scale
    scaled = canonical(int_digits, frac, shift)
    return ([] if sure or scaled == raw else [raw]) + [scaled], end


def _percent_end(t: str, e: int, k: int) -> int:
    if k == e or k >= len(t) or not is_word(t[k]):
        return e
    r = word_end(t, k)
    word = _fold(t[k:r])
    if word == "percent":
        return r
    if word == "per":
        c = run_end(t, r, str.isspace)
        rc = word_end(t, c)
        if c > r and _fold(t[c:rc]) == "cent":
            return rc
    return e


def numeral_starts(t: str, p: int) -> bool:
    """A digit that does not continue a number (after a digit, or a ``.``/``,`` after a digit)."""
    return (is_digit(t[p]) and not (p > 0 and is_digit(t[p - 1]))
            and not (p > 1 and t[p - 1] in ".," and is_digit(t[p - 2])))


def is_page_number(t: str, p: int) -> bool:
    """Right after ``p.``/``pp.`` (any case, at a word start), spaces allowed."""
    j = len(t[:p].rstrip())
    if j < 2 or t[j - 1] != "." or t[j - 2] not in "pP":
        return False
    k = j - 3 if j >= 3 and t[j - 3] in "pP" else j - 2
    return k == 0 or not is_word(t[k - 1])


def block_values(t: str) -> set[str]:
    out: set[str] = set()
    for p in range(len(t)):
        if not numeral_starts(t, p) or is_page_number(t, p):
            continue
        hexed = hex_literal(t, p)
        if hexed is not None:
            out.update([] if hexed[0] is None else [str(hexed[0])])
            continue
        numeral = parse_numeral(t, p)
        values, _ = numeral_values(t, numeral, run_end(t, numeral[2], is_alpha))
        out.update(values)
        out.add(canonical(numeral[0], numeral[1], 0))
    a = 0
    while a < len(t):
        if not is_word(t[a]):
            a += 1
            continue
        r = word_end(t, a)
        value = _NUMBER_WORDS.get(_fold(t[a:r]))
        if value is not None:
            _number_word_values(t, value, r, out)
        a = r
    return out


def hex_literal(t: str, p: int) -> tuple[int | None] | None:
    """A `0x…` literal: (its value,), or (None,) for a hash or a non-hex word; never the numeral 0."""
    if t[p] != "0" or t[p + 1:p + 2] not in ("x", "X") or t[p + 2:p + 3] == "" or t[p + 2] not in _HEX:
        return None
    digits = t[p + 2:word_end(t, p)]
    if not all(c in _HEX for c in digits):
        return (None,)
    value = int(digits, 16)
    return (value if value < 2 ** 128 else None,)


_HEX = frozenset("0123456789abcdefABCDEF")


def _number_word_values(t: str, v: int, r: int, out: set[str]) -> None:
    out.add(str(v))
    value, end = v, r
    if 20 <= v <= 90 and v % 10 == 0:
        k = r + 1 if r < len(t) and t[r] == "-" else run_end(t, r, str.isspace)
        if r < k < len(t) and is_word(t[k]):
            rr = word_end(t, k)
            unit = _fold(t[k:rr])
            if unit in _UNITS:
                value, end = v + _UNITS.index(unit) + 1, rr
                out.add(str(value))
    k = run_end(t, end, str.isspace)
    if end < k < len(t) and is_word(t[k]):
        scale = scale_of(t[k : word_end(t, k)])
        if scale is not None and scale[1]:
            out.add(canonical(str(value), "", scale[0]))


# --- dates ---------------------------------------------------------------------

_MONTHS = {name: n for n, names in enumerate((
    ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",), ("june", "jun"),
    ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"), ("october", "oct"),
    ("november", "nov"), ("december", "dec")), start=1) for name in names}
_ORDINALS = ("st", "nd", "rd", "th")


def _ends_word(t: str, e: int) -> bool:
    return not (e < len(t) and is_word(t[e]))


def _month_at(t: str, k: int) -> tuple[int, int] | None:
    if not (k < len(t) and is_upper(t[k])):
        return None
    r = word_end(t, k)
    month = _MONTHS.get(_fold(t[k:r]))
    if month is None:
        return None
    return (r + 1 if r < len(t) and t[r] == "." else r), month


def _day_at(t: str, k: int) -> tuple[int, int] | None:
    e = run_end(t, k, is_digit)
    if not 1 <= e - k <= 2 or not 1 <= int(t[k:e]) <= 31:
        return None
    if _ends_word(t, e):
        return e, int(t[k:e])
    if t[e : e + 2] in _ORDINALS and _ends_word(t, e + 2):
        return e + 2, int(t[k:e])
    return None


def _year_at(t: str, k: int) -> tuple[int, int] | None:
    e = run_end(t, k, is_digit)
    return (e, int(t[k:e])) if e - k == 4 and _ends_word(t, e) else None


def _separator(t: str, k: int, comma: bool) -> int | None:
    if comma and k < len(t) and t[k] == ",":
        k += 1
    e = run_end(t, k, str.isspace)
    return e if e > k else None


def _iso(t: str, i: int) -> tuple[int, tuple[int, int, int]] | None:
    y = run_end(t, i, is_digit)
    if y - i != 4 or y >= len(t) or t[y] != "-":
        return None
    m_end = run_end(t, y + 1, is_digit)
    if not 1 <= m_end - (y + 1) <= 2:
        return None
    year, month = int(t[i:y]), int(t[y + 1 : m_end])
    if not 1 <= month <= 12:
        return None
    if m_end + 1 < len(t) and t[m_end] == "-" and is_digit(t[m_end + 1]):
        d_end = run_end(t, m_end + 1, is_digit)
        day = int(t[m_end + 1 : d_end])
        ok = d_end - (m_end + 1) <= 2 and 1 <= day <= 31 and _ends_word(t, d_end)
        return (d_end, (year, month, day)) if ok else None
    return (m_end, (year, month, 0)) if m_end - (y + 1) == 2 and _ends_word(t, m_end) else None


def date_at(t: str, i: int) -> tuple[int, tuple[int, int, int]] | None:
    """The date starting at ``t[i]`` (a ``\\w`` run start): (end, (y, m, d))."""
    if is_digit(t[i]):
        found = _iso(t, i)
        if found is not None:
            return found
        day = _day_at(t, i)
        k = None if day is None else _separator(t, day[0], False)
        month = None if k is None else _month_at(t, k)
        k = None if month is None else _separator(t, month[0], True)
        year = None if k is None else _year_at(t, k)
        return None if year is None else (year[0], (year[1], month[1], day[1]))  # type: ignore[index]
    month = _month_at(t, i)
    if month is None:
        return None
    k = _separator(t, month[0], False)
    day = None if k is None else _day_at(t, k)
    k = None if day is None else _separator(t, day[0], True)
    year = None if k is None else _year_at(t, k)
    if year is not None:
        return year[0], (year[1], month[1], day[1])  # type: ignore[index]
    k = _separator(t, month[0], True)
    year = None if k is None else _year_at(t, k)
    return None if year is None else (year[0], (year[1], month[1], 0))


def block_dates(t: str) -> set[tuple[int, int, int]]:
    out: set[tuple[int, int, int]] = set()
    for i, ch in enumerate(t):
        if is_word(ch) and not (i > 0 and is_word(t[i - 1])):
            found = date_at(t, i)
            if found is not None:
                y, m, d = found[1]
                out.update({(y, m, d), (y, m, 0)})
    return out
