"""What ``docent_native`` returns must be what ``native/docent_native.pyi`` declares.

Why: stubtest (``make lint``) compares the stub's signatures with the module's,
but cannot see return types, and the dicts of ``validate_citations`` and
``check_claims`` are typed by ``TypedDict``s that exist only in the stub. So the
stub is loaded as Python here and every function's real result is held to its
declared return type: each dict key for key, in key order, each value by type.
"""

from __future__ import annotations

import ast
import types
import typing
from pathlib import Path
from typing import Any

import docent_native
import pytest

from testkit import REPO_ROOT

STUB = REPO_ROOT / "native" / "docent_native.pyi"

ANSWER = ('The fee is $45 million [1]. It is not red [2]. He said "a quotation nobody wrote" [1]. '
          "It was founded by Acme in May 2001 [2]. This one cites nothing at all. Gone [7].")
BLOCKS = ["Acme Corp pays a fee of $45,000,000 per year.", "The car is red and fast."]


def load_stub() -> types.ModuleType:
    """The stub run as a module: its TypedDicts and annotations become real objects.

    ``typing.type_check_only`` exists only for type checkers, so the import of it is dropped and
    the identity stands in (at runtime it would only have marked the class)."""
    tree = ast.parse(STUB.read_text(encoding="utf-8"), str(STUB))
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module == "typing":
            node.names = [alias for alias in node.names if alias.name != "type_check_only"]
    module = types.ModuleType("docent_native_stub")
    setattr(module, "type_check_only", lambda cls: cls)
    # dont_inherit: without this file's `from __future__ import annotations` the annotations are evaluated.
    exec(compile(tree, str(STUB), "exec", dont_inherit=True), vars(module))  # noqa: S102 (our own stub)
    return module


def mismatch(value: Any, hint: Any, where: str = "result") -> str | None:
    """Where ``value`` departs from ``hint`` (None when it conforms); bool is not an int here."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is None or hint is type(None):
        return None if value is None else f"{where}: {value!r} is not None"
    if origin in (typing.Union, types.UnionType):
        return None if any(mismatch(value, a, where) is None for a in args) else f"{where}: {value!r} is not {hint}"
    if origin is typing.Literal:
        return None if value in args else f"{where}: {value!r} is not one of {args}"
    if typing.is_typeddict(hint):
        if not isinstance(value, dict):
            return f"{where}: {type(value).__name__} is not a {hint.__name__} dict"
        fields = typing.get_type_hints(hint)
        if list(value) != list(fields):
            return f"{where}: keys {list(value)} are not {hint.__name__}'s {list(fields)}"
        return next((m for k, t in fields.items() if (m := mismatch(value[k], t, f"{where}[{k!r}]"))), None)
    if origin is list:
        if type(value) is not list:
            return f"{where}: {type(value).__name__} is not a list"
        return next((m for i, v in enumerate(value) if (m := mismatch(v, args[0], f"{where}[{i}]"))), None)
    if origin is tuple:
        if type(value) is not tuple or len(value) != len(args):
            return f"{where}: {value!r} is not a {len(args)}-tuple"
        return next((m for i, (v, t) in enumerate(zip(value, args)) if (m := mismatch(v, t, f"{where}[{i}]"))), None)
    return None if type(value) is hint else f"{where}: {type(value).__name__} is not {hint.__name__}"


def returned(tmp_path: Path) -> dict[str, Any]:
    """One real result of every function, with inputs that reach every shape (facts, polarity, bad quotes)."""
    (tmp_path / "a").write_bytes(b"abc")
    return {
        "sha256_files": docent_native.sha256_files([tmp_path / "a"]),
        "sha256_bytes": docent_native.sha256_bytes(b"abc"),
        "rrf_fuse": docent_native.rrf_fuse([["a", "b"], ["b"]]),
        "score_fuse": docent_native.score_fuse([["a", "b"], ["b"]], [[2.0, 1.0], [0.5]]),
        "evidence_contrast": docent_native.evidence_contrast([0.9, 0.5, 0.4]),
        "split_sentences": docent_native.split_sentences(ANSWER),
        "parse_citations": docent_native.parse_citations(ANSWER),
        "validate_citations": docent_native.validate_citations(ANSWER, BLOCKS),
        "check_claims": docent_native.check_claims(ANSWER, BLOCKS),
        "select_evidence_sentences": docent_native.select_evidence_sentences("red car speed", BLOCKS * 2),
    }


def test_every_function_returns_what_the_stub_declares(tmp_path: Path) -> None:
    stub = load_stub()
    results = returned(tmp_path)
    assert sorted(results) == sorted(name for name in stub.__all__ if name != "__version__")
    for name, value in results.items():
        hint = typing.get_type_hints(getattr(stub, name))["return"]
        assert mismatch(value, hint, name) is None, mismatch(value, hint, name)


def test_the_examples_reach_every_shape() -> None:
    """Without this the check above could pass on empty lists and a None polarity."""
    report = docent_native.validate_citations(ANSWER, BLOCKS)
    assert report["sentences"] and report["unknown"] and report["uncited"] and report["bad_quotes"]
    claims = docent_native.check_claims(ANSWER, BLOCKS)
    assert {f["kind"] for r in claims for f in r["facts"]} >= {"number", "date", "name"}
    assert any(r["polarity"] is not None for r in claims) and any(r["polarity"] is None for r in claims)


@pytest.mark.parametrize(("value", "hint"), [
    ({"sentence": 0, "quote": "q"}, "BadQuote"),
    ([{"start": 0, "end": 1, "citations": [1]}], "list[CitedSentence]"),
])
def test_a_dict_that_departs_from_its_typeddict_is_caught(value: Any, hint: str) -> None:
    stub = load_stub()
    declared = eval(hint, vars(stub))  # noqa: S307 (a type expression of our own stub)
    assert mismatch(value, declared) is None
    first = value if isinstance(value, dict) else value[0]
    renamed = {("renamed" if i == 0 else k): v for i, (k, v) in enumerate(first.items())}
    retyped = {k: (True if i == 0 else v) for i, (k, v) in enumerate(first.items())}
    reordered = dict(reversed(first.items()))
    for wrong in (renamed, retyped, reordered):
        assert mismatch(wrong if isinstance(value, dict) else [wrong], declared) is not None
