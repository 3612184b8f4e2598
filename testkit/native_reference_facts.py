"""Facts and polarity for the reference claim check (``native/src/facts.rs``, ``polarity.rs``).

Why a module of its own: what an answer sentence asserts (numbers, dates,
identifiers, code, quoted terms, names) and whether it is negated are the two
halves of ``testkit.native_reference_claims``; each is stated here as plainly as
the Rust, character by character. Rules: ``native/docent_native.pyi``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from common.lexicon import STOP_WORDS
from testkit.native_reference import _QUOTE, _fold, _markers
from testkit.native_reference_numbers import (
    date_at,
    hex_literal,
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
    summary source sources block passage document memo report letter policy manual handbook agreement
    checklist schedule
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
        j = run_end(p, line, lambda ch: ch != "\n" and ch.isspace())
        marker_end = _list_marker_end("".join(p), j)
        if marker_end is not None:
            p[j:marker_end] = " " * (marker_end - j)
        try:
            line = p.index("\n", line) + 1
        except ValueError:
            break
    return "".join(p)


def _token_end(w: str, k: int, hyphens: bool) -> int:
    while k < len(w):
        if is_word(w[k]):
            k += 1
        elif (w[k] == "." or (hyphens and w[k] == "-")) and k + 1 < len(w) and is_word(w[k + 1]):
            k += 2
        else:
            break
    return k


def _is_identifier(token: str) -> bool:
    return (
        ("_" in token and any(ch.isalnum() for ch in token))
        or any(is_digit(ch) for ch in token)
        or ("." in token and any(len(part) >= 2 for part in token.split(".")))
        or any(a == "-" and is_upper(b) for a, b in zip(token, token[1:]))
    )


def _is_camel(word: str) -> bool:
    return any(is_alpha(a) and not is_upper(a) and is_upper(b) for a, b in zip(word, word[1:]))


def _name_like(w: str, i: int, r: int) -> bool:
    return r - i >= 2 and is_upper(w[i]) and _fold(w[i:r]) not in NOT_NAMES


def _marked_name(w: str, r: int) -> bool:
    possessive = (r < len(w) and w[r] in "'’" and r + 1 < len(w) and w[r + 1] == "s"
                  and not (r + 2 < len(w) and is_word(w[r + 2])))
    k = run_end(w, r, lambda ch: ch.isspace() or ch == "&")
    return possessive or (r < k < len(w) and is_word(w[k]) and _name_like(w, k, word_end(w, k)))


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
        hexed = hex_literal(w_text, i)
        if hexed is not None:
            end = word_end(w_text, i)
            if hexed[0] is None:
                facts.append(("identifier", i, end, ("token", search_text(t[i:end]))))
            else:
                facts.append(("number", i, end, ("values", [str(hexed[0])])))
            i = end
            continue
        if is_digit(w_text[i]):
            numeral = parse_numeral(w_text, i)
            s = run_end(w_text, numeral[2], is_alpha)
            glued = s < len(w_text) and (is_word(w_text[s]) or (
                w_text[s] == "." and s + 1 < len(w_text) and is_word(w_text[s + 1])))
            if glued:
                end = _token_end(w_text, s, False)
                facts.append(("identifier", i, end, ("token", search_text(t[i:end]))))
            else:
                values, end = numeral_values(w_text, numeral, s)
                start = i - 1 if i > 0 and w_text[i - 1] in _CURRENCY else i
                facts.append(("number", start, end, ("values", values)))
            i = end
            continue
        end = _token_end(w_text, i, True)
        if _is_identifier(w_text[i:end]):
            facts.append(("identifier", i, end, ("token", search_text(t[i:end]))))
            i = end
            continue
        r = word_end(w_text, i)
        if _is_camel(w_text[i:r]) or (_name_like(w_text, i, r) and (not starts or _marked_name(w_text, r))):
            facts.append(("name", i, r, ("name", _fold(w_text[i:r]))))
        i = r
    facts.sort(key=lambda f: f[1])
    return facts


# --- polarity --------------------------------------------------------------------

NEGATORS = frozenset("not no never none nor neither cannot nothing nobody nowhere".split())
COMPARATIVES = frozenset("more less fewer later earlier greater sooner smaller larger higher lower than".split())
CONDITIONAL = frozenset("if unless only otherwise whether until when whenever".split())
SPLITTERS = frozenset("but however although though whereas while because since except which who whom whose".split())
_APOSTROPHES = "'’"
_BREAK_MARKS = ",;:()[]—–"
_STOPS = ".!?…"


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
    stems: dict[str, bool]  # stem -> every occurrence negated
    conditional: bool


def _breaks_clause(t: str, start: int, end: int) -> bool:
    for k in range(start, end):
        c = t[k]
        if c in _BREAK_MARKS:
            return True
        if c in _STOPS and (k + 1 >= len(t) or t[k + 1].isspace()):
            return True
        if c == "-" and k > 0 and t[k - 1].isspace() and k + 1 < len(t) and t[k + 1].isspace():
            return True
    return False


def _words(t: str) -> list[tuple[int, int, str, bool]]:
    """(start, end, fold, negated) of each word, negation scopes resolved."""
    spans = []
    i = 0
    while i < len(t):
        if is_word(t[i]):
            r = word_end(t, i)
            spans.append((i, r))
            i = r
        else:
            i += 1
    folds = [_fold(t[s:e]) for s, e in spans]
    clause, cid = [], 0
    for i, (start, _) in enumerate(spans):
        if i > 0 and (_breaks_clause(t, spans[i - 1][1], start) or folds[i] in SPLITTERS):
            cid += 1
        clause.append(cid)

    def is_negator(i: int) -> bool:
        start = spans[i][0]
        nt = (folds[i] == "t" and i > 0 and start >= 1 and t[start - 1] in _APOSTROPHES
              and spans[i - 1][1] + 1 == start and folds[i - 1].endswith("n"))
        if not (folds[i] in NEGATORS or nt):
            return False
        j = i + 1
        while j < len(spans) and clause[j] == clause[i]:
            if folds[j] in COMPARATIVES:
                return False
            j += 1
        return True

    out = []
    scope = None
    for i, (start, end) in enumerate(spans):
        out.append((start, end, folds[i], scope == clause[i]))
        if is_negator(i):
            scope = clause[i]
    return out


def _stance(words: list[tuple[int, int, str, bool]], keep: Any) -> Stance:
    stems: dict[str, bool] = {}
    for i, word in enumerate(words):
        if keep(i, word):
            key = stem(word[2])
            stems[key] = stems.get(key, True) and word[3]
    return Stance(stems, any(w[2] in CONDITIONAL for w in words))


def answer_stance(t: str, facts: list[tuple[int, int]]) -> Stance:
    words = _words(t)

    def contraction(i: int) -> bool:
        return (i + 1 < len(words) and words[i + 1][2] == "t" and words[i + 1][0] == words[i][1] + 1
                and t[words[i][1]] in _APOSTROPHES)

    def keep(i: int, word: tuple[int, int, str, bool]) -> bool:
        start, end, fold, _ = word
        return (end - start >= 3 and fold not in STOP_WORDS and fold not in NEGATORS and fold != "yes"
                and not contraction(i) and not any(s <= start and end <= e for s, e in facts))

    return _stance(words, keep)


def evidence_stance(t: str) -> Stance:
    return _stance(_words(t), lambda i, word: True)


def strong_match(answer: Stance, evidence: Stance) -> tuple[int, bool, bool, bool] | None:
    """(shared, answer_negated, evidence_negated, agrees) of a strong match."""
    if answer.conditional or evidence.conditional or not answer.stems:
        return None
    shared, a_neg, e_neg, differ, both = 0, False, False, False, False
    for key, negated in answer.stems.items():
        if key in evidence.stems:
            other = evidence.stems[key]
            shared += 1
            a_neg |= negated
            e_neg |= other
            differ |= negated != other
            both |= negated and other
    if 5 * shared < 3 * len(answer.stems):
        return None
    return shared, a_neg, e_neg, both or not differ
