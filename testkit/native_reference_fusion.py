"""Pure-Python references for ``docent_native.rrf_fuse`` and ``score_fuse``.

Split out of ``testkit.native_reference`` (which re-exports both) to keep each
reference module small; the same rules apply: boring, exact, validation in
the Rust core's order.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

#: The `k` of the agreement tie-breaker (``AGREEMENT_K`` in native/src/fusion.rs).
AGREEMENT_K = 60.0


def _validate_fusion(
    n_rankings: int, k: float, weights: Sequence[float] | None, limit: int | None
) -> None:
    """Check arguments in the same order, with the same messages, as Rust."""
    if not (math.isfinite(k) and k > 0):
        raise ValueError("k must be finite and > 0")
    if weights is not None:
        if len(weights) != n_rankings:
            raise ValueError(
                f"weights has {len(weights)} entries but there are {n_rankings} rankings"
            )
        for index, weight in enumerate(weights):
            if not (math.isfinite(weight) and weight >= 0):
                raise ValueError(f"weights[{index}] must be finite and >= 0")
    if limit is not None and limit < 0:
        raise ValueError("limit must be >= 0")


def rrf_fuse_reference(
    rankings: Sequence[Sequence[str]],
    k: float = 60.0,
    weights: Sequence[float] | None = None,
    limit: int | None = None,
) -> list[tuple[str, float]]:
    """Reciprocal-rank fusion, the specification ``docent_native.rrf_fuse`` meets.

    Rank ``r`` (1-based) of ranking ``i`` adds ``weights[i] / (k + r)``; a key
    repeated in one ranking counts only at its first position (later ranks are
    not shifted). Scores are summed in ranking order from 0.0. Sorted by score
    descending, then best rank, then agreement (``weight / (60 + r)`` summed
    over the rankings holding the key, descending; equal to the score here),
    then first ranking index, then key.
    """
    k = float(k)
    _validate_fusion(len(rankings), k, weights, limit)
    scores: dict[str, float] = {}
    best_rank: dict[str, int] = {}
    agreement: dict[str, float] = {}
    first_ranking: dict[str, int] = {}
    for index, ranking in enumerate(rankings):
        if isinstance(ranking, str):
            raise TypeError("a ranking must be a sequence of str, not a str")
        weight = 1.0 if weights is None else float(weights[index])
        seen: set[str] = set()
        for rank, key in enumerate(ranking, start=1):
            if key in seen:
                continue
            seen.add(key)
            scores[key] = scores.get(key, 0.0) + weight / (k + rank)
            best_rank[key] = min(best_rank.get(key, rank), rank)
            agreement[key] = agreement.get(key, 0.0) + weight / (AGREEMENT_K + rank)
            first_ranking.setdefault(key, index)
    return _ordered(scores, best_rank, agreement, first_ranking, limit)


def _ordered(scores: dict[str, float], best_rank: dict[str, int], agreement: dict[str, float],
             first_ranking: dict[str, int], limit: int | None) -> list[tuple[str, float]]:
    """The shared total order of both fusion rules, then the limit."""
    order = sorted(scores, key=lambda key: (-scores[key], best_rank[key], -agreement[key], first_ranking[key], key))
    if limit is not None:
        order = order[:limit]
    return [(key, scores[key]) for key in order]


def score_fuse_reference(
    rankings: Sequence[Sequence[str]],
    scores: Sequence[Sequence[float]],
    weights: Sequence[float] | None = None,
    limit: int | None = None,
    floor: str = "min",
) -> list[tuple[str, float]]:
    """Score fusion, the specification ``docent_native.score_fuse`` meets.

    Each ranking's scores are normalised to ``(v - lo) / (hi - lo)``, clipped
    at 0 (1.0 for all when ``hi <= lo``); ``lo`` is the minimum, or with
    ``floor="mean"`` the mean (a plain left-to-right sum, as in Rust). The
    first occurrence of a key at position ``p`` of ranking ``i`` adds
    ``weights[i] * norm``. Order as in RRF.
    """
    if floor not in ("min", "mean"):
        raise ValueError("floor must be 'min' or 'mean'")
    _validate_fusion(len(rankings), 1.0, weights, limit)
    if len(scores) != len(rankings):
        raise ValueError(f"scores has {len(scores)} lists but there are {len(rankings)} rankings")
    for index, (values, ranking) in enumerate(zip(scores, rankings)):
        if len(values) != len(ranking):
            raise ValueError(
                f"scores[{index}] has {len(values)} entries but rankings[{index}] has {len(ranking)}")
        if not all(math.isfinite(v) for v in values):
            raise ValueError(f"scores[{index}] must be finite")
    fused: dict[str, float] = {}
    best_rank: dict[str, int] = {}
    agreement: dict[str, float] = {}
    first_ranking: dict[str, int] = {}
    for index, (ranking, values) in enumerate(zip(rankings, scores)):
        if isinstance(ranking, str):
            raise TypeError("a ranking must be a sequence of str, not a str")
        weight = 1.0 if weights is None else float(weights[index])
        hi = max(values, default=0.0)
        lo = min(values, default=0.0) if floor == "min" else _plain_sum(values) / max(1, len(values))
        seen: set[str] = set()
        for rank, (key, value) in enumerate(zip(ranking, values), start=1):
            if key in seen:
                continue
            seen.add(key)
            norm = max_zero((value - lo) / (hi - lo)) if hi > lo else 1.0
            fused[key] = fused.get(key, 0.0) + weight * norm
            best_rank[key] = min(best_rank.get(key, rank), rank)
            agreement[key] = agreement.get(key, 0.0) + weight / (AGREEMENT_K + rank)
            first_ranking.setdefault(key, index)
    return _ordered(fused, best_rank, agreement, first_ranking, limit)


def _plain_sum(values: Sequence[float]) -> float:
    total = 0.0
    for value in values:
        total += value
    return total


def max_zero(x: float) -> float:
    """``x`` below or at zero becomes +0.0 (never -0.0), as in Rust."""
    return x if x > 0.0 else 0.0
