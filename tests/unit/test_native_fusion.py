"""``docent_native.rrf_fuse`` must equal the Python reference bit for bit.

Why: retrieval results feed citations, so fusion must be deterministic and
reproducible. Hypothesis drives both implementations with random rankings
(duplicates, empty rankings, ties, zero and fractional weights, limits) and
demands identical keys, order and float bits; example tests pin the error
contract and the documented tie-break rule.
"""

from __future__ import annotations

import math
import re

import docent_native
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from testkit.native_reference import rrf_fuse_reference

Fused = list[tuple[str, float]]

# A small shared pool forces overlap, repeats and ties; free text adds variety.
KEYS = st.one_of(st.sampled_from(["a", "b", "c", "d", "e", "f", "é", "Z", ""]), st.text(max_size=4))
RANKINGS = st.lists(st.lists(KEYS, max_size=25), max_size=6)
K = st.one_of(
    st.sampled_from([60.0, 1.0, 0.5, 1e-9]),
    st.floats(min_value=0.0, exclude_min=True, max_value=1e12),
    st.integers(min_value=1, max_value=1000),
)
WEIGHT = st.one_of(st.sampled_from([0.0, 1.0, 0.5, 2.0]), st.floats(min_value=0.0, max_value=1e6))
LIMIT = st.one_of(st.none(), st.integers(min_value=0, max_value=40))


def assert_identical(native: Fused, reference: Fused) -> None:
    """Equal keys, equal order, and equal float *bits* (hex catches -0.0)."""
    assert [key for key, _ in native] == [key for key, _ in reference]
    assert [score.hex() for _, score in native] == [score.hex() for _, score in reference]
    assert all(type(key) is str and type(score) is float for key, score in native)


@settings(max_examples=400, deadline=None)
@given(rankings=RANKINGS, k=K, limit=LIMIT, data=st.data())
def test_matches_reference(
    rankings: list[list[str]], k: float, limit: int | None, data: st.DataObject
) -> None:
    weights = data.draw(st.one_of(st.none(), st.lists(WEIGHT, min_size=len(rankings), max_size=len(rankings))))
    native = docent_native.rrf_fuse(rankings, k=k, weights=weights, limit=limit)
    assert_identical(native, rrf_fuse_reference(rankings, k=k, weights=weights, limit=limit))


@settings(max_examples=200, deadline=None)
@given(
    rankings=st.lists(st.permutations(["a", "b", "c", "d"]), min_size=1, max_size=4),
    equal_weight=st.sampled_from([0.0, 1.0]),
)
def test_ties_match_reference(rankings: list[list[str]], equal_weight: float) -> None:
    """Permutations of the same keys with equal weights produce many exact ties."""
    weights = [equal_weight] * len(rankings)
    native = docent_native.rrf_fuse(rankings, weights=weights)
    assert_identical(native, rrf_fuse_reference(rankings, weights=weights))


@settings(max_examples=300, deadline=None)
@given(
    rankings=st.lists(st.lists(st.sampled_from("abc"), max_size=4), max_size=3),
    k=st.one_of(st.floats(), st.integers(min_value=-3, max_value=3)),
    weights=st.one_of(st.none(), st.lists(st.floats(), max_size=4)),
    limit=st.one_of(st.none(), st.integers(min_value=-3, max_value=3)),
)
def test_same_outcome_on_arbitrary_arguments(
    rankings: list[list[str]], k: float, weights: list[float] | None, limit: int | None
) -> None:
    """Valid or not, both implementations return or raise the same thing."""
    try:
        expected: Fused | str = rrf_fuse_reference(rankings, k=k, weights=weights, limit=limit)
    except ValueError as exc:
        expected = str(exc)
    try:
        got: Fused | str = docent_native.rrf_fuse(rankings, k=k, weights=weights, limit=limit)
    except ValueError as exc:
        got = str(exc)
    if isinstance(expected, str) or isinstance(got, str):
        assert got == expected
    else:
        assert_identical(got, expected)


def test_scores_are_weighted_reciprocal_ranks() -> None:
    fused = dict(docent_native.rrf_fuse([["x", "y"], ["y", "x"]], k=1.0, weights=[0.3, 0.7]))
    assert fused["x"] == 0.0 + 0.3 / 2 + 0.7 / 3
    assert fused["y"] == 0.0 + 0.3 / 3 + 0.7 / 2


def test_duplicate_counts_once_at_first_position_without_shifting() -> None:
    assert docent_native.rrf_fuse([["a", "a", "b"]]) == [("a", 1 / 61), ("b", 1 / 63)]


def test_tie_break_rule() -> None:
    # Same score, best rank and first ranking: key ascending.
    assert [k for k, _ in docent_native.rrf_fuse([["b", "a"], ["a", "b"]])] == ["a", "b"]
    # Same score and best rank: first ranking wins over a smaller key.
    assert [k for k, _ in docent_native.rrf_fuse([["b"], ["a"]])] == ["b", "a"]
    # All scores 0: best rank beats first-ranking index.
    assert [k for k, _ in docent_native.rrf_fuse([["p", "q"], ["r"]], weights=[0, 0])] == ["p", "r", "q"]


def test_empty_inputs_and_limit() -> None:
    assert docent_native.rrf_fuse([]) == []
    assert docent_native.rrf_fuse([[], []], weights=[1.0, 2.0]) == []
    assert docent_native.rrf_fuse([["a", "b", "c"]], limit=0) == []
    assert [k for k, _ in docent_native.rrf_fuse([["a", "b", "c"]], limit=2)] == ["a", "b"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"k": 0.0}, "k must be finite and > 0"),
        ({"k": -1.0}, "k must be finite and > 0"),
        ({"k": math.nan}, "k must be finite and > 0"),
        ({"k": math.inf}, "k must be finite and > 0"),
        ({"weights": [1.0]}, "weights has 1 entries but there are 2 rankings"),
        ({"weights": [1.0, 1.0, 1.0]}, "weights has 3 entries but there are 2 rankings"),
        ({"weights": [1.0, -0.5]}, "weights[1] must be finite and >= 0"),
        ({"weights": [math.nan, 1.0]}, "weights[0] must be finite and >= 0"),
        ({"weights": [1.0, math.inf]}, "weights[1] must be finite and >= 0"),
        ({"limit": -1}, "limit must be >= 0"),
    ],
)
def test_value_errors(kwargs: dict[str, object], message: str) -> None:
    rankings = [["a", "b"], ["b"]]
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        docent_native.rrf_fuse(rankings, **kwargs)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        rrf_fuse_reference(rankings, **kwargs)  # type: ignore[arg-type]


def test_type_errors() -> None:
    with pytest.raises(TypeError):
        docent_native.rrf_fuse(["ab"])  # a str ranking would silently fuse characters
    with pytest.raises(TypeError):
        docent_native.rrf_fuse([["a", 1]])  # type: ignore[list-item]


def test_returns_callers_key_objects() -> None:
    """The binding reuses the input str objects instead of copying them."""
    key = "".join(["doc", "-42"])
    ((fused_key, _),) = docent_native.rrf_fuse([[key]])
    assert fused_key is key
