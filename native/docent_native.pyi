"""Type stubs for ``docent_native``, Docent's Rust extension (see Documentation/native.md).

Every function is pure (no global state) and releases the GIL for its heavy
work. Pure-Python reference implementations with identical results live in
``testkit/native_reference.py``; the property tests hold the two equal.
"""

import os
from collections.abc import Sequence
from typing import Literal, TypedDict, type_check_only

__all__ = [
    "__version__",
    "sha256_files",
    "sha256_bytes",
    "rrf_fuse",
    "score_fuse",
    "evidence_contrast",
    "split_sentences",
    "parse_citations",
    "validate_citations",
    "check_claims",
    "select_evidence_sentences",
]

__version__: str

# The dicts that validate_citations and check_claims return, key for key and in
# key order (the Rust structs of the same names in native/src/validate.rs,
# cited.rs and claims.rs). Types only: they do not exist at runtime, so import
# them under `if TYPE_CHECKING:`; tests/unit/test_native_types.py holds the
# returned dicts to them.

@type_check_only
class CitedSentence(TypedDict):
    """One answer sentence (``str`` indexes) and the block numbers it cites."""

    start: int
    end: int
    citations: list[int]

@type_check_only
class BadQuote(TypedDict):
    """A quotation (text between the marks) that no candidate block holds."""

    sentence: int
    quote: str

@type_check_only
class CitationReport(TypedDict):
    """The report of ``validate_citations``."""

    sentences: list[CitedSentence]
    unknown: list[int]
    uncited: list[int]
    bad_quotes: list[BadQuote]
    valid: bool

@type_check_only
class FactReport(TypedDict):
    """One fact of a sentence: ``answer[start:end] == text``; ``cited``: the checked blocks holding it."""

    kind: Literal["number", "date", "identifier", "code", "quote", "name"]
    text: str
    start: int
    end: int
    found: bool
    cited: list[int]

@type_check_only
class Polarity(TypedDict):
    """The compared block sentence (``str`` indexes into block ``block``) and each side's negation."""

    answer_negated: bool
    evidence_negated: bool
    agrees: bool
    block: int
    start: int
    end: int

@type_check_only
class ClaimReport(TypedDict):
    """The report of ``check_claims`` for one answer sentence (``str`` indexes into the answer)."""

    sentence: int
    start: int
    end: int
    blocks: list[int]
    facts: list[FactReport]
    polarity: Polarity | None
    supported: bool

def sha256_files(
    paths: Sequence[str | os.PathLike[str]], chunk_size: int = 1048576
) -> list[str]:
    """Return the lowercase-hex SHA-256 of each file, in input order.

    Files are streamed ``chunk_size`` bytes at a time (never loaded whole) and
    hashed in parallel across files by a pool sized to the available CPUs, so
    fingerprinting a large corpus is bounded in memory and uses every core.

    Raises:
        ValueError: ``chunk_size`` is not between 1 and 67108864 (64 MiB).
        OSError: a file cannot be opened or read; the subclass follows the
            errno as with ``open()`` (``FileNotFoundError`` for a missing file,
            ``IsADirectoryError``, ``PermissionError``...), and ``filename`` is
            the path as given. When several files fail, the first failing one
            in input order is reported.
    """

def sha256_bytes(data: bytes) -> str:
    """Return the lowercase-hex SHA-256 of ``data`` (same as ``hashlib``)."""

def rrf_fuse(
    rankings: Sequence[Sequence[str]],
    k: float = 60.0,
    weights: Sequence[float] | None = None,
    limit: int | None = None,
) -> list[tuple[str, float]]:
    """Fuse best-first rankings with reciprocal-rank fusion (RRF).

    Scoring: the key at 1-based rank ``r`` of ranking ``i`` contributes
    ``weights[i] / (k + r)`` (weight 1.0 when ``weights`` is None). A key
    repeated within one ranking counts only at its first (best) position;
    later repeats are skipped and do not shift the ranks of following keys.
    A key's score is summed in ranking order starting from 0.0, so results are
    bit-identical to the Python reference.

    Ordering (total, deterministic): fused score descending; ties broken by
    (1) best rank across all rankings, ascending; then (2) agreement, the sum
    of ``weights[i] / (60 + r)`` over the rankings holding the key, descending
    (for RRF this equals the score; it decides ties of ``score_fuse``); then (3) index of the first ranking in which the key appears,
    ascending; then (4) the key string, ascending (Unicode code-point order,
    like Python ``str`` comparison).

    Returns ``(key, score)`` pairs, at most ``limit`` of them (all when
    ``limit`` is None). Keys with weight-0 contributions only are still
    returned, with score 0.0.

    Raises:
        ValueError: ``k`` is not finite and > 0 (``"k must be finite and > 0"``);
            ``weights`` length differs from the number of rankings
            (``"weights has N entries but there are M rankings"``); a weight is
            negative or not finite (``"weights[i] must be finite and >= 0"``);
            ``limit`` is negative (``"limit must be >= 0"``). Checked in that
            order.
        TypeError: a ranking is a ``str`` or contains a non-``str`` key.
    """

def evidence_contrast(similarities: Sequence[float]) -> float:
    """How far the best similarity stands out from the rest ("evidence sufficiency").

    The values are sorted descending (IEEE total order, so ``0.0`` ranks above
    ``-0.0``); ``top`` is the first and the background is all the others. With
    ``n`` background values, ``mean = (((0.0 + b0) + b1) + ...) / n`` and
    ``std = sqrt((((0.0 + d0*d0) + d1*d1) + ...) / n)`` with ``di = bi - mean``
    (population standard deviation, plain left-to-right sums in sorted order).
    Returns ``(top - mean) / max(std, 0.01)``, bit-identical to the Python
    reference; ``0.0`` when there are fewer than two values. Input order does
    not matter. Huge magnitudes (around 1e154 and beyond) overflow to inf/nan
    following IEEE-754, identically on both sides.

    The 0.01 floor exists because a background of (nearly) equal similarities,
    e.g. a tiny corpus or duplicated chunks, has a spread of ~0, and the ratio
    would explode to huge or infinite values driven by rounding noise; spreads
    below 0.01 count as "no spread", so a top hit 0.05 above a flat background
    scores 5. The GIL is released for 4096 values or more.

    Raises:
        ValueError: a value is NaN or infinite (``"similarities must be finite"``),
            checked before the length.
        TypeError: ``similarities`` is not a sequence of numbers.
    """

def split_sentences(text: str) -> list[tuple[int, int]]:
    """Split ``text`` into sentences, as ``(start, end)`` ``str`` indexes.

    Spans are ordered, non-empty and whitespace-trimmed (whitespace is
    ``str.isspace()``); every non-whitespace character is in exactly one span
    and only whitespace lies between spans, so ``text[start:end]`` is the
    verbatim sentence. Each maximal whitespace run ``text[k:m]`` strictly inside
    the text is tested, with ``start`` the current sentence's first character:

    1. Blank line: the run contains two or more ``"\\n"`` -> boundary.
    2. Line structure: the run contains one ``"\\n"`` and the next line starts a
       list item (``"-"``, ``"*"`` or ASCII digits + ``"."``, then whitespace),
       or starts with ``"#"``, or the line just ended starts (after leading
       whitespace) with ``"#"`` (Markdown headings are sentences) -> boundary.
    3. Punctuation: ``text[start:k]`` ends with one or more of ``.!?…`` then
       zero or more of ``"'”’)]``, and ``text[m]`` (optionally after one of
       ``"'“‘([``) is an uppercase letter (``c.isupper() and c.isalnum()``), an
       ASCII digit or ``"["`` -> boundary; except when no closing character
       follows the punctuation, the last punctuation is ``"."``, and the last
       whitespace-separated word before that dot, stripped of leading
       ``("'“‘[`` and lower-cased (word characters only), is one of ``e.g i.e
       etc vs cf al fig figs no nos vol pp p eq sec mr mrs ms dr prof st inc ltd
       co corp jr sr approx dept est`` or is a single letter (``str.isalpha()``).
    4. Trailing citations: when rule 3 applies, the run has no ``"\\n"`` and
       ``text[m:]`` starts with citation markers (see ``parse_citations``),
       separated only by whitespace other than ``"\\n"`` and followed by
       whitespace or the end of the text, the markers end the previous
       sentence: ``"It is red. [1] Next one."`` -> ``"It is red. [1]"``,
       ``"Next one."``.

    Rules 1-2 take precedence over 3-4. Deterministic; equal to
    ``testkit.native_reference.split_sentences_reference`` for every ``str``
    (character classes are Python's ``str.isspace``/``\\w``/``isupper``/
    ``isalpha``/``lower``, pinned to Unicode 14.0 by ``native/src/word_table.rs``).
    The GIL is released for texts of 4 KiB (UTF-8) or more.

    Raises:
        UnicodeEncodeError: ``text`` contains a lone surrogate.
    """

def parse_citations(text: str) -> list[tuple[int, int, list[int]]]:
    """Split ``text`` with ``split_sentences`` and list each sentence's citations.

    Returns ``(start, end, numbers)`` per sentence; ``numbers`` are the cited
    block numbers in order of first appearance, without duplicates. A citation
    marker is ``"["``, one or more elements separated by ``","`` (with any
    number of spaces U+0020 before and after each comma), then ``"]"``; an
    element is a number or an inclusive range ``n-m`` (hyphen or en dash ``–``,
    no spaces) with ``n <= m`` expanding to at most 50 numbers; numbers are
    ASCII digits without a leading zero, 1 to 9999. Anything else in brackets
    (``[0]``, ``[01]``, ``[10000]``, ``[5-3]``, ``[1-60]``, ``[ 1]``, ``[1 ]``,
    ``[^1]``, ``[a]``...) is not a citation and is plain text. Markers are
    found left to right within each sentence; a bracket that is not a marker
    is skipped one character at a time (``[[1]]`` cites 1).
    The GIL is released for texts of 4 KiB (UTF-8) or more.

    Raises:
        UnicodeEncodeError: ``text`` contains a lone surrogate.
    """

def validate_citations(
    answer: str, blocks: Sequence[str], min_quote_chars: int = 12
) -> CitationReport:
    """Check an answer's citations against its numbered source blocks.

    Block ``n`` is ``blocks[n - 1]``. Returns a ``CitationReport``, keys in this order:

    * ``"sentences"``: ``CitedSentence`` dicts, as ``parse_citations``.
    * ``"unknown"``: sorted unique cited numbers greater than ``len(blocks)``.
    * ``"uncited"``: indexes of sentences with no citation that are not exempt.
      Exempt: the sentence text starts with ``"#"`` (a heading), or it has
      fewer than 2 words (maximal runs of ``\\w``) once its citation markers
      are cut out (text on either side of a marker does not join).
    * ``"bad_quotes"``: ``BadQuote`` dicts ``{"sentence": i, "quote": q}`` in sentence order,
      then left to right. Quoted spans are ``"..."`` up to the next ``"``, or
      ``“...`` up to the next ``”``, scanned left to right within the sentence
      (an opening mark with no closing mark is ignored). ``q`` is the verbatim
      text between the marks; spans shorter than ``min_quote_chars`` characters
      are not checked. A checked quote is bad unless its normalised text
      occurs in the normalised text of a candidate block: the existing blocks
      the sentence cites, or every block if the sentence cites nothing (so a
      sentence citing only unknown blocks, or any sentence when ``blocks`` is
      empty, cannot verify a quote). Normalising = ``" ".join(s.split())``
      then lower-casing each word character (``\\w``) with ``str.lower()``
      (per character: Greek final sigma is not contextual).
    * ``"valid"``: no unknown, no uncited, no bad quotes, and at least one
      sentence cites something (an empty answer is not valid).

    Equal to ``testkit.native_reference.validate_citations_reference``. The GIL is
    released when answer and blocks total 4 KiB (UTF-8) or more.

    Raises:
        ValueError: ``min_quote_chars`` is below 1 (``"min_quote_chars must be >= 1"``).
        TypeError: ``blocks`` is a ``str`` or holds a non-``str``.
        UnicodeEncodeError: a string contains a lone surrogate.
    """

def check_claims(
    answer: str, blocks: Sequence[str], min_quote_chars: int = 12
) -> list[ClaimReport]:
    """Check that each cited sentence's facts occur in the blocks it cites, with the same polarity.

    ``validate_citations`` proves a sentence has a citation; this proves the
    citation backs it. Block ``n`` is ``blocks[n - 1]``; pass every evidence
    block, rendered as the model saw it (label line included: the label's
    document name is evidence for names, its ``[n]`` and ``p. N`` are not
    values). The answer is split and its citations parsed exactly as
    ``parse_citations``. Returns one ``ClaimReport`` per sentence, in order,
    keys in this order::

        {"sentence": i, "start": s, "end": e,      # answer str indexes
         "blocks": [n, ...],                       # cited blocks that exist, citation order: what was checked
         "facts": [{"kind": k, "text": t, "start": s, "end": e,  # answer str indexes, t == answer[s:e]
                    "found": bool, "cited": [n, ...]}],          # "cited": the checked blocks holding it
         "polarity": None | {"answer_negated": bool, "evidence_negated": bool, "agrees": bool,
                             "block": n, "start": s, "end": e},  # block str indexes of the compared sentence
         "supported": bool}

    ``kind`` is ``"number"``, ``"date"``, ``"identifier"``, ``"code"``,
    ``"quote"`` or ``"name"``. ``found`` is ``bool(cited)``, except that a
    name is also found when any block holds it (the subject of a question is
    often named in another block than the one holding the fact). A sentence
    with no existing cited block gets ``blocks: []``, ``facts: []``,
    ``polarity: None``, ``supported: True`` (``validate_citations`` reports it).
    ``supported``: every fact found and ``polarity`` is None or agrees.
    Character classes are Python's (``\\w``, ``isspace``, ``isalpha``,
    ``isupper``; digits are ASCII ``0-9``); the fold lower-cases word
    characters per character.

    Facts, from the sentence *prepared*: citation markers blanked (spaces,
    offsets kept), and at each line start (after spaces) a list marker
    blanked: ``-``/``*``/``•``/``+``, 1-3 digits + ``.``/``)``, ``(`` + 1-3
    ASCII letters or digits + ``)``, or one ASCII letter + ``)``, each followed
    by whitespace. Then, in this order:

    1. ``"code"``: a backtick up to the next one (an unmatched backtick ends the
       scan); the span is blanked; ``text`` is the content.
    2. ``"quote"``: quoted spans found exactly as ``validate_citations`` does,
       on the text left by step 1; content shorter than ``min_quote_chars``
       with a word character is a fact (longer ones are ``validate_citations``'
       to check); every quoted span is blanked.
    3. A left-to-right scan over the starts of ``\\w`` runs of what is left:

       * ``"date"``: ``YYYY-M-D`` (month and day of 1-2 digits) or
         ``YYYY-MM``; ``D Month[,] Y``, ``Month D[,] Y`` (day of 1-2 digits,
         optional lower-case ``st``/``nd``/``rd``/``th``), ``Month[,] Y``;
         a month is a whole capitalised word folding to a month name or
         ``jan``...``dec``/``sept``, optionally followed by ``.``; a year is
         exactly 4 digits; parts are separated by whitespace; month 1-12, day
         1-31. Key ``(y, m, d)`` or ``(y, m)``; a year alone is a number.
       * a hex literal, ``0x``/``0X`` + a hex digit: the word run is a
         ``"number"`` whose one value is the literal's (``0x00`` is 0,
         ``0xff`` 255), or an ``"identifier"`` when the run is not all hex
         digits or its value needs more than 128 bits. In a block it is that
         value, never the numeral 0 followed by letters: "0xff" does not back
         an answer's "0".
       * at a digit, a numeral: the digit run; 1-3 digits may continue with
         groups of exactly 3 digits after ``,`` (1+ groups), else after
         U+0020/U+00A0/U+2009/U+202F (1+), else after ``.`` (2+ groups:
         ``45.000`` is 45); then a fraction, ``.`` + digits (``,`` + digits
         after ``.`` grouping). Letters (``isalpha``) glued to it are read; if
         a word character, or ``.`` + a word character, follows them, the
         token (word characters and ``.`` + word character) is an
         ``"identifier"`` (``1.2.3``, ``0x0a``). Otherwise a ``"number"``:
         ``k``/``K``, ``m``/``M``, ``b``/``B`` (glued, or the next word after
         whitespace when nothing is glued) scale by 10^3, 10^6, 10^9
         *ambiguously* (the unscaled value is a candidate too);
         ``hundred``/``thousand``/``million``/``billion``/``trillion``/
         ``bn``/``mn`` (any case, glued or next) scale surely (scaled value
         only); other glued letters are a unit (``5ms``, ``1st``: unscaled).
         The span takes a currency symbol (``$€£¥₹``) right before, the scale
         word, a ``%`` right after, or ``percent``/``per cent`` after
         whitespace. Values are canonical decimals (``"45000000"``,
         ``"3.5"``): ``12%`` = ``12 percent`` = 12; currency codes are words.
       * ``"identifier"``: the token ``\\w+([.-]\\w+)*`` when it holds ``_``
         (and a letter or digit), a digit, a ``.``-separated part of 2+
         characters, or a ``-`` followed by an upper-case letter
         (``Content-Length``, ``TS-71``).
       * ``"name"``, the ``\\w`` run: CamelCase (a letter that is not upper-case
         followed by an upper-case one: ``TechCorp``) always; otherwise when
         it has 2+ characters, starts upper-case and its fold is not in
         ``testkit.native_reference_facts.NOT_NAMES`` (answer words such as
         ``yes``/``no``/``note``, function words, month and day names, RFC
         2119 keywords, currency codes, units, titles, document words such as
         ``section``/``memo``/``agreement``), unless it starts the sentence
         (first token, first on its line, or right after ``:``/``.``/``!``/
         ``?``/``…``, looking back over whitespace and ``([\"'“‘*#``); then
         only when a possessive ``'s`` follows, or, after spaces or ``&``,
         another word that would be a name (``Meridian Coffee``). A
         possessive is outside the run already. Number words in the answer
         are not facts ("one of the parties").

    Found, per block (its citation markers blanked first): a number when one
    of its values is among the block's values: every numeral read the same
    way, with and without its scale, starting at each digit that does not
    continue a number (not after a digit, nor after ``.``/``,`` after a
    digit: ``3.3.1`` holds 3.3, not 1) and is not a page number (right after
    ``p.``/``pp.``); and number words (``zero``...``twenty``, tens,
    ``hundred``, ``thousand``, ``million``, ``billion``, ``dozen``, ``once``,
    ``twice``, ``single``, ``double``, ``triple``, ``first``...``eighth``; a
    tens word + ``-``/whitespace + ``one``...``nine`` as their sum; either
    followed by a sure scale word, scaled). A date when the block has it (a
    full date also counts as its ``(y, m)``). Code and quotes when their
    search text is a substring of the block's; identifiers when it occurs
    with no letter or digit just before or after it (``0x3876..ccbb`` is not in
    ``0x3876..ccbb7f0a``). A name when its fold
    occurs in the block's search text where no letter or digit precedes it
    (``_`` separates: ``Northwind`` is in ``northwind_leave_policy.pdf``).
    Search text: soft hyphens (U+00AD) removed; a ``-`` after a letter,
    followed by whitespace holding ``\\n`` and a letter that is not
    upper-case, removed with that whitespace (``trans-\\nport``); then
    ``" ".join(s.split())`` and the fold.

    Polarity. Words are folded ``\\w`` runs, compared by stem (drop the first
    of ``ing``/``ed``/``es``/``s`` that leaves 3+ characters, not ``s`` after
    ``s``; then a final ``e`` when 4+ characters remain). Clauses end at
    ``,;:()[]—–``, at ``.!?…`` followed by whitespace or the end, at a ``-``
    between whitespace, and before ``but``/``however``/``although``/
    ``though``/``whereas``/``while``/``because``/``since``/``except``/
    ``which``/``who``/``whom``/``whose``. A negator (``not``/``no``/
    ``never``/``none``/``nor``/``neither``/``cannot``/``nothing``/
    ``nobody``/``nowhere``, or the ``t`` right after ``'``/``’`` right after
    a word ending in ``n``) negates the rest of its clause, unless
    ``more``/``less``/``fewer``/``later``/``earlier``/``greater``/
    ``sooner``/``smaller``/``larger``/``higher``/``lower``/``than`` follows it
    in the clause (a limit). A stem is negated when every occurrence is. So a
    leading ``No,``/``No.`` negates nothing: the claim after it is compared.
    Texts holding ``if``/``unless``/``only``/``otherwise``/``whether``/
    ``until``/``when``/``whenever`` are conditional and never compared. The
    answer sentence is compared in parts cut at ``;``; a part's content is the
    stems of its words of 3+ characters that are not ``STOP_WORDS`` (as in
    ``select_evidence_sentences``), negators, ``yes``, the stem before an
    ``n't``, nor inside a name, identifier, code or quote fact. A sentence
    (``split_sentences``) of a checked block matches strongly when it holds
    at least 3/5 of the content (``5 * shared >= 3 * len(content)``). Each
    side is negated when it negates some shared stem; the pair ``agrees``
    unless a shared stem is negated on one side only and none on both. Per
    part: among the strong matches sharing the most (citation order, then text
    order), the first agreeing one, else the first. ``polarity`` is the first
    part's result that disagrees, else the first part's result; ``None`` when
    no part has a strong match.

    Equal to ``testkit.native_reference_claims.check_claims_reference``. The GIL
    is released when answer and blocks total 4 KiB (UTF-8) or more.

    Raises:
        ValueError: ``min_quote_chars`` is below 1 (``"min_quote_chars must be >= 1"``).
        TypeError: ``blocks`` is a ``str`` or holds a non-``str``.
        UnicodeEncodeError: a string contains a lone surrogate.
    """

def select_evidence_sentences(
    query: str, blocks: Sequence[str], max_sentences: int = 3, min_overlap: float = 0.2
) -> list[tuple[int, int, int, float]]:
    """Pick the sentences of ranked ``blocks`` that best match ``query``.

    Query terms: maximal runs of ``\\w`` in ``query`` of at least 3 characters,
    lower-cased per character (``str.lower()``), minus the stop words of
    ``common.lexicon.STOP_WORDS`` (tested before stemming), each reduced to its
    ``common.lexicon.stem``, de-duplicated.
    No terms -> ``[]``. Each block is split with ``split_sentences``; a sentence
    with fewer than 4 words (``\\w`` runs) is skipped. Otherwise ``overlap =
    (distinct terms equal to the stem of one of its lower-cased words) / (number
    of terms)``;
    the sentence is kept when ``overlap >= min_overlap`` (so a NaN
    ``min_overlap`` keeps nothing, and ``<= 0`` keeps every sentence of 4+
    words) and scored ``overlap + 0.001 * (1 / (block_index + 1))``, a tie-break
    favouring earlier (better-ranked) blocks.

    Returns up to ``max_sentences`` ``(block_index, start, end, score)``, with
    0-based ``block_index``, ``str`` indexes into that block, ordered by score
    descending, then block index, then start. Scores are bit-identical to
    ``testkit.native_reference.select_evidence_sentences_reference``. The GIL is
    released when query and blocks total 4 KiB (UTF-8) or more.

    Raises:
        ValueError: ``max_sentences`` is negative (``"max_sentences must be >= 0"``).
        TypeError: ``blocks`` is a ``str`` or holds a non-``str``.
        UnicodeEncodeError: a string contains a lone surrogate.
    """

def score_fuse(
    rankings: Sequence[Sequence[str]],
    scores: Sequence[Sequence[float]],
    weights: Sequence[float] | None = None,
    limit: int | None = None,
    floor: Literal["min", "mean"] = "min",
) -> list[tuple[str, float]]:
    """Fuse best-first rankings by weighted, normalised scores.

    Each ranking's scores are normalised to ``(v - lo) / (hi - lo)`` over that
    ranking (1.0 for every item when all are equal), clipped at 0; ``lo`` is
    the ranking's minimum (``floor="min"``) or its mean (``floor="mean"``, a
    left-to-right sum divided by the length), so with ``"mean"`` everything
    at or below the mean adds 0. The first occurrence of a
    key at position ``p`` of ranking ``i`` adds ``weights[i] * norm`` (weight
    1.0 when ``weights`` is None); repeats within a ranking are skipped. Sums
    run in ranking order from 0.0, so results are bit-identical to the Python
    reference. Ordering and ``limit`` are exactly as in ``rrf_fuse``.

    Raises:
        ValueError: bad weights or limit (messages as in ``rrf_fuse``);
            ``"scores has N lists but there are M rankings"``;
            ``"scores[i] has N entries but rankings[i] has M"``;
            ``"scores[i] must be finite"``. Checked in that order.
            ``"floor must be 'min' or 'mean'"`` before all of them.
        TypeError: a ranking is a ``str`` or contains a non-``str`` key.
    """
