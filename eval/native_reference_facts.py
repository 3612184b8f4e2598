"""Facts and polarity for the reference claim check (``native/src/facts.rs``, ``polarity.rs``).

Why a module of its own: what an answer sentence asserts (numbers, dates,
identifiers, code, quoted terms, names) and whether it is negated are the two
halves of ``eval.native_reference_claims``; each is stated here as plainly as
the Rust, character by character. Rules: ``native/docent_native.pyi``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from eval.native_reference import _QUOTE, STOP_WORDS, _fold, _markers
from eval.native_reference_numbers import (
    date_at,
    is_alpha,
    is_digit,
    is_upper,
    is_word,
    numeral_values,
    parse_numeral,
    run_end,
    word_end,
)

NOT_NAMES = frozenset("""
    i yes no not note ok okay a an the and or but nor if in on at of for to by with from as into per via
    it its this that these those there here they we you he she his her their our your my however also
    both each all any some such thus then when where while which who what why how is are was were be do
    does
    january february march april may june july august september october november december jan feb mar
    apr jun jul aug sep sept oct nov dec monday tuesday wednesday thursday friday saturday sunday
    must shall should required recommended optional
    usd eur gbp jpy chf cad aud cny inr us
    kb mb gb tb kib mib gib tib hz khz mhz ghz ms
    mr mrs dr prof
    section chapter page pages table figure fig appendix exhibit article clause paragraph step answer
    summary source sources block passage document
""".split())
_CURRENCY = "$€£¥₹"
_LOOK_BACK_SKIP = "([\"'“‘*#"
_BREAKS = ":.!?…"


def search_text(text: str) -> str:
    """Normalised for substring finds: soft hyphens dropped, line-break
    hyphenation joined, whitespace collapsed, case folded."""
    v = text.replace("\u00ad", "")
    out = []
    k = 0
    while k < len(v):
        if v[k] == "-" and k > 0 and is_alpha(v[k - 1]):
            m = run_end(v, k + 1, str.isspace)
            if "\n" in v[k + 1 : m] and m < len(v) and is_alpha(v[m]) and not is_upper(v[m]):
                k = m
                continue
        out.append(v[k])
        k += 1
    return _fold(" ".join("".join(out).split()))


def _list_marker_end(p: str, j: int) -> int | None:
    if j >= len(p):
        return None
    c = p[j]
    if c in "-*•+":
        end = j + 1
    elif c in "0123456789":
        e = run_end(p, j, is_digit)
        if not (e - j <= 3 and e < len(p) and p[e] in ".)"):
            return None
        end = e + 1
    elif c == "(":
        e = run_end(p, j + 1, lambda ch: ch.isascii() and ch.isalnum())
        if not (1 <= e - j - 1 <= 3 and e < len(p) and p[e] == ")"):
            return None
        end = e + 1
    elif c.isascii() and c.isalpha() and j + 1 < len(p) and p[j + 1] == ")":
        end = j + 2
    else:
        return None
    return end if end < len(p) and p[end].isspace() else None


def prepare(sentence: str) -> str:
    """The sentence with citation markers and line-start list markers blanked."""
    p = list(sentence)
    for start, end, _ in _markers(sentence):
        p[start:end] = " " * (end - start)
    line = 0
    while True:
        j = run_end(p, line, lambda ch: ch != "\n" and ch.isspace())  # type: ignore[arg-type]
        end = _list_marker_end("".join(p), j)
        if end is not None:
            p[j:end] = " " * (end - j)
        try:
            line = p.index("\n", line) + 1
        except ValueError:
            break
    return "".join(p)


def _token_end(w: str, k: int) -> int:
    while k < len(w):
        if is_word(w[k]):
            k += 1
        elif w[k] == "." and k + 1 < len(w) and is_word(w[k + 1]):
            k += 2
        else:
            break
    return k


def _is_identifier(token: str) -> bool:
    parts = token.split(".")
    return (
        ("_" in token and any(ch.isalnum() for ch in token))
        or any(is_digit(ch) for ch in token)
        or (len(parts) > 1 and any(len(part) >= 2 for part in parts))
        or any(is_alpha(a) and not is_upper(a) and is_upper(b) for a, b in zip(token, token[1:]))
    )


def _at_start(w: str, i: int) -> bool:
    k = i
    while k > 0:
        c = w[k - 1]
        if c == "\n":
            return True
        if not (c.isspace() or c in _LOOK_BACK_SKIP):
            return c in _BREAKS
        k -= 1
    return True


def sentence_facts(t: str, min_quote_chars: int) -> list[tuple[str, int, int, tuple[str, Any]]]:
    """(kind, start, end, key) of a prepared sentence's facts, in written order."""
    w = list(t)
    facts: list[tuple[str, int, int, tuple[str, Any]]] = []
    p = 0
    while "`" in w[p:]:
        open_ = w.index("`", p)
        if "`" not in w[open_ + 1 :]:
            break
        close = w.index("`", open_ + 1)
        needle = search_text(t[open_ + 1 : close])
        if needle:
            facts.append(("code", open_ + 1, close, ("text", needle)))
        w[open_ : close + 1] = " " * (close + 1 - open_)
        p = close + 1
    for match in _QUOTE.finditer("".join(w)):
        group = 1 if match.group(1) is not None else 2
        start, end = match.span(group)
        if end - start < min_quote_chars and any(is_word(ch) for ch in t[start:end]):
            facts.append(("quote", start, end, ("text", search_text(t[start:end]))))
        w[start - 1 : end + 1] = " " * (end + 2 - start)
    w_text = "".join(w)
    seen_token = False
    i = 0
    while i < len(w_text):
        if not is_word(w_text[i]):
            i += 1
            continue
        starts = not seen_token or _at_start(w_text, i)
        seen_token = True
        date = date_at(w_text, i)
        if date is not None:
            facts.append(("date", i, date[0], ("date", date[1])))
            i = date[0]
            continue
        if is_digit(w_text[i]):
            numeral = parse_numeral(w_text, i)
            s = run_end(w_text, numeral[2], is_alpha)
            glued = s < len(w_text) and (is_word(w_text[s]) or (
                w_text[s] == "." and s + 1 < len(w_text) and is_word(w_text[s + 1])))
            if glued:
                end = _token_end(w_text, s)
                facts.append(("identifier", i, end, ("text", search_text(t[i:end]))))
            else:
                values, end = numeral_values(w_text, numeral, s)
                start = i - 1 if i > 0 and w_text[i - 1] in _CURRENCY else i
                facts.append(("number", start, end, ("values", values)))
            i = end
            continue
        end = _token_end(w_text, i)
        if _is_identifier(w_text[i:end]):
            facts.append(("identifier", i, end, ("text", search_text(t[i:end]))))
            i = end
            continue
        r = word_end(w_text, i)
        word = _fold(w_text[i:r])
        if not starts and r - i >= 2 and is_upper(w_text[i]) and word not in NOT_NAMES:
            facts.append(("name", i, r, ("name", word)))
        i = r
    facts.sort(key=lambda f: f[1])
    return facts


# --- polarity --------------------------------------------------------------------

NEGATORS = frozenset("not no never none nor neither cannot nothing nobody nowhere".split())
COMPARATIVES = frozenset("more less fewer later earlier greater sooner smaller larger higher lower than".split())
NEUTRAL = frozenset("if unless except without only otherwise whether but although though however whereas until".split())
_APOSTROPHES = "'’"


def stem(word: str) -> str:
    n = len(word)
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and n - len(suffix) >= 3 and not (suffix == "s" and word.endswith("ss")):
            n -= len(suffix)
            break
    if n >= 4 and word[n - 1] == "e":
        n -= 1
    return word[:n]


@dataclass(frozen=True)
class Stance:
    stems: frozenset[str]
    negated: bool
    conditional: bool


def _runs(t: str) -> list[tuple[int, int, str]]:
    out = []
    i = 0
    while i < len(t):
        if is_word(t[i]):
            r = word_end(t, i)
            out.append((i, r, _fold(t[i:r])))
            i = r
        else:
            i += 1
    return out


def _is_nt(t: str, runs: list[tuple[int, int, str]], index: int) -> bool:
    start, _, word = runs[index]
    return (index > 0 and word == "t" and start >= 1 and t[start - 1] in _APOSTROPHES
            and runs[index - 1][1] + 1 == start and runs[index - 1][2].endswith("n"))


def _negated(t: str, runs: list[tuple[int, int, str]]) -> bool:
    for i, (_, _, word) in enumerate(runs):
        limit = i + 1 < len(runs) and runs[i + 1][2] in COMPARATIVES
        if (word in NEGATORS and not limit) or _is_nt(t, runs, i):
            return True
    return False


def answer_stance(t: str) -> Stance:
    runs = _runs(t)
    stems = set()
    for i, (start, end, word) in enumerate(runs):
        contraction = i + 1 < len(runs) and _is_nt(t, runs, i + 1)
        if (end - start >= 3 and word not in STOP_WORDS and word not in NEGATORS and word != "yes"
                and not contraction):
            stems.add(stem(word))
    return Stance(frozenset(stems), _negated(t, runs), any(w in NEUTRAL for _, _, w in runs))


def evidence_stance(t: str) -> Stance:
    runs = _runs(t)
    return Stance(frozenset(stem(w) for _, _, w in runs), _negated(t, runs), any(w in NEUTRAL for _, _, w in runs))


def strong_share(answer: Stance, evidence: Stance) -> int | None:
    if evidence.conditional or not answer.stems:
        return None
    shared = len(answer.stems & evidence.stems)
    return shared if 4 * shared >= 3 * len(answer.stems) else None
