"""`docent_native.score_fuse` equals its Python reference exactly."""

from __future__ import annotations

import docent_native
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from testkit.native_reference import score_fuse_reference
from tests.unit.test_native_fusion import KEYS, LIMIT, WEIGHT, assert_identical

SCORE = st.one_of(st.sampled_from([0.0, 1.0, -1.0, 0.5]), st.floats(min_value=-1e6, max_value=1e6))


@st.composite
def legs(draw: st.DrawFn) -> tuple[list[list[str]], list[list[float]]]:
    rankings = draw(st.lists(st.lists(KEYS, max_size=25), max_size=5))
    scores = [draw(st.lists(SCORE, min_size=len(r), max_size=len(r))) for r in rankings]
    return rankings, scores


@settings(max_examples=400, deadline=None)
@given(legs=legs(), limit=LIMIT, data=st.data())
def test_matches_reference(legs: tuple[list[list[str]], list[list[float]]], limit: int | None,
                           data: st.DataObject) -> None:
    rankings, scores = legs
    weights = data.draw(st.one_of(st.none(), st.lists(WEIGHT, min_size=len(rankings), max_size=len(rankings))))
    floor = data.draw(st.sampled_from(["min", "mean"]))
    native = docent_native.score_fuse(rankings, scores, weights=weights, limit=limit, floor=floor)
    assert_identical(native, score_fuse_reference(rankings, scores, weights=weights, limit=limit, floor=floor))


def test_confidence_breaks_what_rrf_ties() -> None:
    rankings = [["a", "b", "c"], ["b", "a", "c"]]
    scores = [[10.0, 2.0, 1.0], [0.50, 0.49, 0.10]]
    rrf = docent_native.rrf_fuse(rankings)
    assert rrf[0][1] == rrf[1][1]  # a tie for rank fusion
    fused = docent_native.score_fuse(rankings, scores)
    assert [key for key, _ in fused] == ["a", "b", "c"]


def test_an_exact_score_tie_goes_to_the_chunk_both_rankings_place_higher() -> None:
    # atlas7 a17 (Documentation/evaluation.md, fifth round): the two full-text rankings
    # give the answer and its rival 0.5 each; the chunk id used to decide.
    rankings = [["rival", "answer"], ["answer", "other", "rival"]]
    scores = [[2.664, 1.961], [1.988, 1.451, 0.803]]
    for names in (rankings, [[{"rival": "zz", "answer": "aa"}.get(k, k) for k in r] for r in rankings],
                  [[{"rival": "aa", "answer": "zz"}.get(k, k) for k in r] for r in rankings]):
        fused = docent_native.score_fuse(names, scores, [0.5, 0.5], floor="mean")
        assert fused[0][1] == fused[1][1] == 0.5
        assert fused[0][0] == names[1][0]  # whatever the ids, the answer (ranks 2 and 1) first


def test_mean_floor_lets_a_standout_beat_a_flat_legs_best() -> None:
    rankings = [["a", "b", "c", "d"], ["b", "c", "d", "a"]]
    scores = [[10.0, 2.0, 1.0, 1.0], [0.52, 0.51, 0.50, 0.49]]
    assert docent_native.score_fuse(rankings, scores)[0][0] == "b"  # min-max stretches the flat leg
    mean = dict(docent_native.score_fuse(rankings, scores, floor="mean"))
    assert mean == {"a": 1.0, "b": 1.0, "c": pytest.approx(1 / 3), "d": 0.0}  # below a mean adds nothing


@pytest.mark.parametrize("rankings, scores, kwargs, message", [
    ([["a"]], [[1.0]], {"floor": "median"}, "floor must be 'min' or 'mean'"),
    ([["a"]], [], {}, "scores has 0 lists but there are 1 rankings"),
    ([["a", "b"]], [[1.0]], {}, r"scores\[0\] has 1 entries but rankings\[0\] has 2"),
    ([["a"]], [[float("nan")]], {}, r"scores\[0\] must be finite"),
    ([["a"]], [[1.0]], {"weights": [-1.0]}, r"weights\[0\] must be finite and >= 0"),
    ([["a"]], [[1.0]], {"limit": -1}, "limit must be >= 0"),
])
def test_value_errors(rankings: list[list[str]], scores: list[list[float]], kwargs: dict[str, object],
                      message: str) -> None:
    with pytest.raises(ValueError, match=message):
        docent_native.score_fuse(rankings, scores, **kwargs)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=message):
        score_fuse_reference(rankings, scores, **kwargs)  # type: ignore[arg-type]


@settings(max_examples=200, deadline=None)
@given(rankings=st.lists(st.lists(KEYS, max_size=4), max_size=3),
       scores=st.lists(st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=4), max_size=3),
       weights=st.one_of(st.none(), st.lists(st.floats(allow_nan=True), max_size=3)),
       limit=st.one_of(st.none(), st.integers(-2, 5)))
def test_same_outcome_on_arbitrary_arguments(rankings: list[list[str]], scores: list[list[float]],
                                             weights: list[float] | None, limit: int | None) -> None:
    def outcome(fn):  # type: ignore[no-untyped-def]
        try:
            return fn(rankings, scores, weights=weights, limit=limit)
        except ValueError as exc:
            return str(exc)
    native, reference = outcome(docent_native.score_fuse), outcome(score_fuse_reference)
    if isinstance(native, str) or isinstance(reference, str):
        assert native == reference
    else:
        assert_identical(native, reference)
