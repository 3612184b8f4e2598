"""A model's answer released to the stream one checked sentence at a time.

Why: the web app painted the model's draft token by token and swapped it when the check failed,
so a person read unchecked text first — and after Stop, the unchecked draft stayed. Now nothing
reaches a client before it is checked: the model's tokens are gathered into sentences, each
complete sentence is checked against the passages the model read (the verifier, and cheap repairs:
a missing citation attributed, a fact re-cited to the block that states it), and only a sentence
that passes is sent on, as the `token` events every client already appends. A sentence that
fails is held back, never shown; the stream says `checking` meanwhile. So the text a client has
shown is always a prefix of the final answer, and Stop leaves only checked sentences.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

import docent_native

from rag_system.generation.events import Emit
from rag_system.grounding.yes_no import REPLY

#: A sentence's check: the sentence as it may be shown (markers repaired), or None when it may not.
SentenceCheck = Callable[[str], "str | None"]

#: A citation marker opening what the splitter took for the next sentence ("... is 3. [1] The ..."):
#: it belongs to the sentence before it.
_LEADING_MARKER = re.compile(r"\s*\[\d+(?:\s*[-–,]\s*\d+)*\]")
_WORDS = re.compile(r"[^\W_]")
#: A sentence whose subject points back at the sentence before it ("This is allowed and ...", "It
#: cannot ...", "Such files are ..."): alone, it says nothing checkable about what it refers to.
BACK_REFERENCE = re.compile(r"^\W*(?:this|that|these|those|it|they|such)\b(?!\s+(?:document|section|page|"
                            r"chapter|guide|manual|policy|agreement|specification|memo|letter|report)\b)",
                            re.IGNORECASE)


@dataclass
class Release:
    """One answer's stream: feed it the model's pieces, `finish()` when the model stops."""

    check: SentenceCheck
    emit: Emit
    #: Whether checked sentences, taken together, answer the question yet (a number when one is asked,
    #: a cited block that holds the ask): until they do, they wait; if they never do, none is shown
    #: and the whole draft goes to repair.
    ready: Callable[[str], bool] = lambda text: True
    opening: str = ""  # said before the first sentence shown unless it opens so itself ("No. ")
    released: list[str] = field(default_factory=list)  # what was sent, each with the spacing before it
    pending: list[str] = field(default_factory=list)  # checked, waiting for the answer to be ready
    held: list[str] = field(default_factory=list)  # sentences that failed their check, in order
    sentences: int = 0
    _buffer: str = ""
    _after_held: bool = False  # the last sentence taken was held back

    @property
    def text(self) -> str:
        """What the client has been shown: checked sentences only."""
        return "".join(self.released).strip()

    def feed(self, piece: str) -> None:
        self._buffer += piece
        spans = docent_native.split_sentences(self._buffer)
        if len(spans) < 2:
            return
        cut = spans[-1][0]  # the last sentence may still be growing: everything before it is complete
        if self._buffer[cut:].lstrip().startswith("["):  # "[1]" after the full stop belongs to the sentence
            marker = _LEADING_MARKER.match(self._buffer, cut)  # before it, once it is whole
            if marker is None or marker.end() == len(self._buffer.rstrip()):
                return
            cut = marker.end()
        done, self._buffer = self._buffer[:cut], self._buffer[cut:]
        self._take(done)

    def finish(self) -> None:
        done, self._buffer = self._buffer, ""
        self._take(done)

    def _take(self, text: str) -> None:
        spans = docent_native.split_sentences(text) or ([(0, len(text))] if text.strip() else [])
        # a marker the splitter cut off after the full stop ("... is absent. [1]") ends the sentence before it
        merged: list[tuple[int, int]] = []
        for a, b in spans:
            if merged and _LEADING_MARKER.fullmatch(text[merged[-1][1]:b]):
                merged[-1] = (merged[-1][0], b)
            else:
                merged.append((a, b))
        spans = merged
        start = 0
        for i, (a, b) in enumerate(spans):
            end = spans[i + 1][0] if i + 1 < len(spans) else len(text)
            segment = text[start:end]
            start = end
            sentence = segment.strip()
            if not _WORDS.search(_LEADING_MARKER.sub(" ", sentence)):
                continue  # markers or punctuation alone say nothing
            self.sentences += 1
            self.emit("checking", {"sentence": self.sentences, "message": "Checking…"})
            # What points back at a sentence held back is held too: "Yes, you can write ... with a leading
            # zero [..]. This is allowed and is used for disambiguation with C-style octal literals [1]."
            # lost its first sentence, and "allowed" then passed against another sentence of the block.
            dangling = self._after_held and bool(BACK_REFERENCE.match(_LEADING_MARKER.sub("", sentence)))
            shown = None if dangling else self.check(sentence)
            self._after_held = shown is None
            if shown is None:
                self.held.append(sentence)
                continue
            lead = segment[:len(segment) - len(segment.lstrip())] if self.released or self.pending else ""
            if not self.released and not self.pending and self.opening and not REPLY.match(shown):
                shown = self.opening + shown
            self.pending.append(lead + shown if lead or not (self.released or self.pending) else " " + shown)
            if self.released or self.ready("".join(self.pending)):
                for piece in self.pending:
                    self.released.append(piece)
                    self.emit("token", {"text": piece})
                self.pending = []
