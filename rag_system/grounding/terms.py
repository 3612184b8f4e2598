"""Key terms of a question and how much of them the evidence covers.

Why: a small model asked "What is the capital of Mongolia?" over RFCs will
often answer from memory. Before any model runs, we check that the evidence
mentions the question's key terms at all; when it does not, the honest answer
is a refusal, and no prompt wording can be trusted to produce one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from common.lexicon import ASKING_WORDS, CARDINALS, STOP_WORDS, WORD, stem
from rag_system.grounding.roots import root, synonyms
from rag_system.indexing.languages import all_function_words

# What a question's key terms skip: also the function words of the other languages documents come in
# (rag_system/indexing/languages.py), so "Wie ... ich ... ein" in a German question are not key terms that
# German evidence "lacks". Chunking (cohesion.py) keeps the English list (common.lexicon).
QUESTION_STOP_WORDS = STOP_WORDS | (all_function_words() - {"die", "come", "son"})


def key_terms(text: str) -> list[str]:
    """Distinct stems of the content words of `text`, in order of appearance."""
    seen: dict[str, None] = {}
    for word in WORD.findall(text.lower()):
        if len(word) < 3 and not word.isdigit():
            continue
        if word in QUESTION_STOP_WORDS:
            continue
        seen.setdefault(stem(word), None)
    return list(seen)


#: Numbers written as digits also say their word: a question's "ten" is a block's "10" (key terms keep words).
_NUMBER_WORDS = {str(n): w for n, w in enumerate(CARDINALS)}

_CAMEL_PART = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def term_set(texts: Iterable[str], camel: bool = False) -> set[str]:
    """Stems of every word, and of each part of a snake_case word ("northwind_leave_policy.pdf" names
    Northwind) and, with `camel`, of a CamelCase one; two words in a row joined ("working days" says the
    question's "workdays", "data base" "database"), and numbers up to 20 as words ("10" says "ten").

    `camel` is for checking what a block says ("} AlertDescription;", a
    registry's enum, says alert and description), not for ranking sentences:
    split there too, it changed which sentences quoting picks, and rfc_q16's
    quote lost the PTO formula.
    """
    out: set[str] = set()
    for t in texts:
        previous, end = "", 0
        for match in WORD.finditer(t):
            word = match.group(0)
            w = word.lower()
            s = stem(w)
            out.add(s)
            if previous and t[end:match.start()] in (" ", "-"):  # "working days" says "workday" too
                out.add(previous + s)
            previous, end = (s if w.isalpha() else ""), match.end()
            if w in _NUMBER_WORDS:
                out.add(stem(_NUMBER_WORDS[w]))  # as a question's key term has it ("three" -> "thre")
            if "_" in w:
                out.update(stem(part) for part in w.split("_") if part)
            if camel and word[1:] != w[1:] and not word.isupper():  # upper case after the first letter
                parts = _CAMEL_PART.findall(word)
                if len(parts) > 1:
                    out.update(stem(part.lower()) for part in parts)
    return out


_TOKEN = re.compile(r"[A-Za-z0-9]+(?:[-/.][A-Za-z0-9]+)*")


#: A version written after its name: "TLS 1.4", "revision 3" ("TLS 1.3" and "revision 4" say something else).
_NAMED_VERSION = re.compile(r"\b(?:[A-Z]{2,}[A-Za-z]*|[Vv]ersion|[Rr]evision|[Rr]elease)\s+\d+(?:\.\d+)*\b")


def compound_words(text: str) -> list[str]:
    """Versions and numbered names as written ("Atlas-8", "HTTP/3", "Qwen3-Embedding-4B", "1.4", "TLS 1.4")
    and dotted code names ("numpy.linalg.solve"): their parts alone ("Atlas", "8"; "numpy", "solve") say
    something else."""
    found = [t for t in _TOKEN.findall(text) if re.search(r"[-/.]", t) and any(c.isdigit() for c in t)]
    found += [t for t in _TOKEN.findall(text) if _dotted_name(t)]
    found += [m.group(0) for m in _NAMED_VERSION.finditer(text)]
    return list(dict.fromkeys(found))


def _dotted_name(token: str) -> bool:
    parts = token.split(".")
    return len(parts) > 1 and "-" not in token and "/" not in token and \
        all(len(p) >= 2 and p.isalnum() for p in parts) and any(p.isalpha() for p in parts)


def mentions_compound(word: str, compounds: set[str]) -> bool:
    """`word` (a compound) is written in the text whose `compound_set` is `compounds`."""
    wanted = joined(word)
    return any(wanted in c for c in compounds)


def joined(text: str) -> str:
    """Lower-cased with hyphens, slashes, underscores and spaces dropped ("Atlas-8" = "atlas 8" = "ATLAS8");
    dots stay, so "1.4" is not "14"."""
    return re.sub(r"[\s\-/_]+", "", text.lower())


def compound_set(text: str) -> set[str]:
    """`joined` forms of every token of `text` and of each pair of neighbouring tokens."""
    tokens = [joined(t) for t in _TOKEN.findall(text)]
    return set(tokens) | {a + b for a, b in zip(tokens, tokens[1:])}


def specific_words(text: str) -> list[str]:
    """The words of a question that name the thing asked about, as written, in order.

    The same rule as `weighted_terms`' double weight: capitalised after the
    first word ("PostgreSQL", "Mitchell"), or holding a digit or underscore
    ("9000", "ack_delay_exponent"). When the documents never mention one of
    them, they are about something else, however close the topic.
    """
    seen: dict[str, str] = {}
    for position, match in enumerate(WORD.finditer(text)):
        word = match.group(0)
        lower = word.lower()
        if (len(lower) < 3 and not lower.isdigit()) or lower in STOP_WORDS:
            continue
        if (position > 0 and word[:1].isupper()) or any(c.isdigit() or c == "_" for c in word):
            seen.setdefault(stem(lower), word)
    return list(seen.values())


def weighted_terms(text: str) -> dict[str, float]:
    """Key-term stems with weights: names and codes count double.

    A word capitalised mid-sentence ("Mongolia", "QUIC") or containing a digit
    or underscore ("ack_delay_exponent", "9000") names the specific thing
    asked about; when it is missing from the evidence, the evidence is about
    something else even if the generic words ("capital") happen to occur.
    """
    weights: dict[str, float] = {}
    for position, match in enumerate(WORD.finditer(text)):
        word = match.group(0)
        lower = word.lower()
        if (len(lower) < 3 and not lower.isdigit()) or lower in QUESTION_STOP_WORDS:
            continue
        specific = (position > 0 and word[:1].isupper()) or any(c.isdigit() or c == "_" for c in word)
        key = stem(lower)
        weights[key] = max(weights.get(key, 0.0), 2.0 if specific else 1.0)
    return weights


def coverage(question: str, evidence: Iterable[str]) -> tuple[float, list[str]]:
    """Weighted share of the question's key terms found in the evidence, and the missing ones."""
    weights = weighted_terms(question)
    if not weights:
        return 1.0, []
    present = term_set(evidence)
    missing = [t for t in weights if t not in present]
    total = sum(weights.values())
    return (total - sum(weights[t] for t in missing)) / total, missing


def held_by_meaning(question: str, sentence: str) -> float:
    """Weighted share of the question's key terms a sentence says as written, in another form of the
    word or by a word of the same meaning: the share that picks which sentences answer a yes/no
    question (`generation.replying`). Looser than `coverage`, whose stems keep "cryptographically" and
    "cryptographic", "protected" and "protection" apart: "Note that Stateless Resets do not have any
    cryptographic protection" held a third of "Are QUIC stateless resets cryptographically protected?"
    by stems, and so no more than sentences sharing one word with it."""
    weights = weighted_terms(question)
    if not weights:
        return 0.0
    forms = {t: {t} | roots for t, roots in _roots_of(question, weights).items()}  # stem and words' roots
    said = term_set([sentence]) | {root(w) for w in WORD.findall(sentence)}
    said |= {alike for key in list(said) for alike in synonyms(key)}
    total = sum(weights.values())
    return sum(w for t, w in weights.items() if any(_same_word(f, key) for f in forms[t] for key in said)) / total


def _same_word(term: str, key: str) -> bool:
    """One word in two forms: equal, one the other's start (at least four letters), or six letters alike."""
    if term == key:
        return True
    short, long = sorted((term, key), key=len)
    return (len(short) >= 4 and long.startswith(short)) or \
        (len(short) >= 6 and long[:6] == short[:6])


def ask_terms(question: str) -> list[str]:
    """What the question asks of its subject: its content stems that are not names or codes.

    "What is the annual salary of TechCorp's CEO James Mitchell?" -> annual, salary
    (the subject, TechCorp / CEO / James / Mitchell, is what the other half names).
    """
    return [t for t, w in weighted_terms(question).items() if w <= 1.0 and t not in ASKING_WORDS]


def ask_coverage(question: str, blocks: Iterable[str]) -> tuple[float, list[str]]:
    """The best single block's share of the question's ask terms, and the terms that block lacks.

    One block, not the union: a signature block naming the CEO and a schedule
    mentioning pay elsewhere do not together say what the CEO earns.
    """
    wanted = ask_terms(question)
    if not wanted:
        return 1.0, []
    alike = _said_alike(question, wanted)
    best, lacking = -1.0, wanted
    for text in blocks:
        present = term_set([text])
        roots = {root(w) for w in WORD.findall(text)} if alike else set()
        share = sum(1 for t in wanted if t in present or alike.get(t, set()) & roots) / len(wanted)
        if share > best:
            best, lacking = share, [t for t in wanted if t not in present and not alike.get(t, set()) & roots]
    return max(best, 0.0), lacking


def _said_alike(question: str, wanted: list[str]) -> dict[str, set[str]]:
    """Each ask term's other words of the same meaning (`words.SYNONYMS`, by root): a block that says
    "Manufacturer: Meridian Coffee Systems" says who makes the Atlas-7, and "requires written approval"
    how to get authorization (both answerable rows were refused for want of the question's own word)."""
    alike: dict[str, set[str]] = {}
    for key, roots in _roots_of(question, wanted).items():
        others = set().union(*(synonyms(r) for r in roots | {key})) - roots - {key}
        if others:
            alike[key] = others
    return alike


def _roots_of(question: str, terms: Iterable[str]) -> dict[str, set[str]]:
    """Each of the question's `terms` (stems) with the roots of the words it was stemmed from
    ("cryptographically" -> "cryptograph…" and its root), the forms the meaning rules compare."""
    out: dict[str, set[str]] = {t: set() for t in terms}
    for word in WORD.findall(question):
        out.get(stem(word.lower()), set()).add(root(word))
    return out


def support(sentence: str, block: str) -> float:
    """Share of a sentence's content words that occur in `block` (lexical groundedness)."""
    terms = key_terms(strip_markers(sentence))
    if not terms:
        return 1.0
    present = term_set([block], camel=True)
    return sum(1 for t in terms if t in present) / len(terms)


#: A citation marker: "[1]", "[2, 3]", "[1-4]".
MARKER = re.compile(r"\[\d+(?:\s*[-–,]\s*\d+)*\]")


def strip_markers(text: str) -> str:
    """`text` with its citation markers blanked."""
    return MARKER.sub(" ", text)


_CAPITALISED_RUN = re.compile(r"\b[A-Z][\w'-]*(?:\s+(?:of\s+|and\s+|the\s+)?[A-Z][\w'-]*)+")


def initialisms(text: str) -> set[str]:
    """Upper-case initials of each run of capitalised words ("Federal Trade Commission" -> "FTC"), and
    dotted or plain abbreviations as written ("U.S." -> "US"), so a question and its documents may
    spell one name two ways."""
    out: set[str] = set()
    for m in _CAPITALISED_RUN.finditer(text):
        words = [w for w in m.group(0).split() if w[:1].isupper() and w.lower() not in STOP_WORDS]
        out.update("".join(w[0] for w in words[i:]) for i in range(len(words) - 1))
    out.update(m.group(0).replace(".", "") for m in re.finditer(r"\b(?:[A-Z]\.){2,}|\b[A-Z]{2,6}\b", text))
    return {i for i in out if len(i) >= 2}


def spelled_elsewhere(word: str, question: str, evidence: set[str]) -> bool:
    """`word` is an abbreviation the evidence spells out, or part of a name the evidence abbreviates."""
    if word.isupper() and word in evidence:
        return True
    return any(word in run.split() and "".join(w[0] for w in run.split() if w[:1].isupper()) in evidence
               for run in (m.group(0) for m in _CAPITALISED_RUN.finditer(question)))


_YES_NO_QUESTION = re.compile(r"^\W*(?:(?:if|once|when|after|before|while|unless)\b[^,?]*,\s*)?(?:is|are|was|were|do|does|did|can|could|may|might|must|shall|should|will|would|"
                              r"has|have|had)\b", re.IGNORECASE)


#: An alternative offered after the first ("..., or only B?", "A or rather B?"): the question asks
#: which, not whether.
_ALTERNATIVE = re.compile(r",\s*or\b|\bor\s+(?:only|just|merely|rather|instead|else)\b", re.IGNORECASE)


def is_yes_no(question: str) -> bool:
    """A question that opens with its auxiliary ("Does ...", "Can I ...", after a condition: "If the
    job fails, is it retried?") asks yes or no, unless it
    offers alternatives ("Can it be used for A, or only for B?": "No" would deny A, yet the answer
    may be "both")."""
    return bool(_YES_NO_QUESTION.match(question)) and not _ALTERNATIVE.search(question)

