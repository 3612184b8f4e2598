"""What quantity a question asks for, and whether an answer states one of that kind.

Why: the claim check proves that every number an answer states is in the block it cites, not that
it is the number asked for. Asked "What is the maximum operating temperature of the Atlas-7?" over
its service manual (which gives only "brew water at 93.5 degrees Celsius"), the 1.5B model answered
"The brew boiler operates at a pressure of 9.2 bar during extraction. [1]": true, cited, and no
answer to the question (found in the web app, 2026-12-05). A question whose ask is a physical
dimension ("temperature", "pressure", "voltage", "weight", "percentage") is answered by a value in
that dimension's units; an answer that states numbers and none in those units answers another
question, and goes to repair and, failing that, to a quote chosen without its words.
"""

from __future__ import annotations

import re

from rag_system.grounding.asks import ask_head
from rag_system.grounding.terms import stem, strip_markers

_QUANTITY_QUESTION = re.compile(
    r"\b(?:how (?:many|much|long|often|large|big|far|old)|what (?:value|percentage|number|amount|fee|price|"
    r"size|length|limit|year|date|deadline|formula|equation)|which (?:year|date|value|number|formula))\b"
    # A number or value named by what it numbers: "What version number appears in the long header ...?",
    # "What part number ...", "What confidence value ...", "What numeric alert description ...", "Which
    # error code ..." (rfc_q07: the quote said "All version 2 Long Header packet types are different")
    r"|\b(?:what|which)\s+(?!(?:is|are|was|were|does|do|did|the|a|an|can|could|should|must|will|would|has|have|"
    r"of|in|for)\b)[\w-]+\s+(?:number|value)s?\b|\b(?:what|which)\s+numeric\b"
    r"|\b(?:what|which)\s+(?:error|status|exit|return|response|alert)\s+codes?\b"
    # "How is that timer actually computed?" asks for the formula: "computed based on the packet number
    # spaces [3]" is valid and says nothing (rfc_q16), where the block holds "PTO = smoothed_rtt + ..."
    r"|\bhow\b[^?.]{0,80}?\b(?:computed|calculated)\b", re.IGNORECASE)
_QUANTITY = re.compile(
    r"\d|\b(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|"
    r"fifty|sixty|hundred|thousand|million|billion|once|twice|daily|weekly|monthly|annually|yearly)\b"
    # Months as names, not "may" the verb (which made "Its peer may open ..." state a quantity)
    r"|(?-i:\b(?:January|February|March|April|June|July|August|September|October|November|December)\b)"
    r"|(?-i:\bMay\b)(?=\s+\d)"
    # how often, in words: "every morning", "each week", "every other day"
    r"|\b(?:every|each)\s+(?:other\s+)?(?:second|minute|hour|day|morning|afternoon|evening|night|week|weekend|"
    r"month|quarter|year)s?\b", re.IGNORECASE)


def asks_quantity(question: str) -> bool:
    """"How many ...", "What value ...": an answer without a number does not answer it."""
    return bool(_QUANTITY_QUESTION.search(question))


#: A formula: an operator between two terms, or a max()/min() call.
_FORMULA = re.compile(r"\w\s*[=*/+]\s*\w|\b(?:max|min)\s*\(", re.IGNORECASE)


def states_quantity(answer: str, question: str = "") -> bool:
    """A number, a number word, a frequency, a month or a formula, outside the citation markers.

    A number the question itself says is no answer to it: asked "What version number appears in the
    long header of QUIC version 2 packets?", "All version 2 Long Header packet types are different"
    states only the question's 2 (rfc_q07), and "The version number appears in the long header of
    QUIC version 2 packets" restates it."""
    text = strip_markers(answer)
    if question:
        said = {t.lower() for t in _TOKEN.findall(question) if _QUANTITY.search(t)}
        text = _TOKEN.sub(lambda m: " " if m.group(0).lower() in said else m.group(0), text)
    return bool(_QUANTITY.search(text) or _FORMULA.search(text))


#: A word or number with its inner punctuation ("0x6b3343cf", "1.5", "10,000"), not a sentence's full stop.
_TOKEN = re.compile(r"\w+(?:[.,:/-]\w+)*")


_NUMBER = r"\d(?:[\d.,]*\d)?\s*"
#: The units a value of each dimension is written in, right after its number ("93.5 degrees Celsius",
#: "9.2 bar", "230 V", "52 watts", "12 kg", "8 percent"). Only dimensions whose units say which one they
#: are: a "length" may be bytes or metres, a "time" a date or a duration, so they are left out.
DIMENSION_UNITS: dict[str, tuple[str, re.Pattern[str]]] = {
    stem(head): (head, re.compile(_NUMBER + units, re.IGNORECASE)) for head, units in (
    ("temperature", r"(?:°|º|℃|℉|degrees?\b|deg\b|celsius\b|fahrenheit\b|kelvin\b|[CFK]\b)"),
    ("pressure", r"(?:bar\b|mbar\b|psi\b|[kMGh]?Pa\b|pascals?\b|atm\b|atmospheres?\b|mmHg\b|torr\b)"),
    ("voltage", r"(?:[kmM]?V\b|volts?\b|kilovolts?\b|millivolts?\b)"),
    ("power", r"(?:[kmMG]?W\b|watts?\b|kilowatts?\b|megawatts?\b|horsepower\b|hp\b|BTU\b)"),
    ("weight", r"(?:k?g\b|grams?\b|kilograms?\b|kilos?\b|lbs?\b|pounds?\b|oz\b|ounces?\b|tonnes?\b|tons?\b|t\b)"),
    ("mass", r"(?:k?g\b|grams?\b|kilograms?\b|kilos?\b|lbs?\b|pounds?\b|tonnes?\b|tons?\b)"),
    ("percentage", r"(?:%|per\s?cent\b|percentage points?\b)"),
)}
_DIGIT = re.compile(r"\d")


def asked_dimension(question: str) -> tuple[str, re.Pattern[str]] | None:
    """The dimension the question asks a value of ("temperature") and its units' pattern, if any."""
    head = ask_head(question)
    return DIMENSION_UNITS.get(head) if head else None


def other_quantity(question: str, answer: str) -> str | None:
    """The dimension the question asks for ("temperature") when the answer states numbers and none of
    them in that dimension's units; None otherwise (including when the question asks no such thing)."""
    dimension = asked_dimension(question)
    if dimension is None:
        return None
    name, units = dimension
    text = strip_markers(answer)
    if not _DIGIT.search(text) or units.search(text):
        return None
    return name
