//! Reciprocal-rank fusion (RRF) of several best-first rankings.
//!
//! Docent fuses dense and lexical retrieval results (thousands of candidates
//! per query) with RRF. The result must be bit-for-bit reproducible and equal
//! to the pure-Python reference in `testkit/native_reference.py`, so:
//!
//! * each key's score is accumulated in ranking order starting from `0.0`,
//!   with the contribution `weight / (k + rank)` computed exactly as Python
//!   does (IEEE-754 double division and addition);
//! * ordering is total: score descending, then best (smallest) 1-based rank
//!   across rankings, then agreement (the weighted sum of `1 / (60 + rank)`
//!   over the rankings that hold the key, descending: of two keys a score ties,
//!   the one the rankings place higher overall; for RRF itself it equals the
//!   score, so it never decides there), then index of the first
//!   ranking containing the key, then the key itself (byte order of UTF-8 ==
//!   Unicode code-point order == Python `str` order). Agreement is what keeps
//!   an exact score tie from being decided by the key, a content hash that
//!   changes whenever chunking does.
//!
//! A key repeated within one ranking counts only at its first position; later
//! repeats are skipped without shifting the ranks of the items after them.
//!
//! This module is pure Rust (no PyO3 types) so it can be tested with
//! `cargo test`.

use std::cmp::Ordering;
use std::collections::HashMap;

use crate::error::{count_at_least, NativeError};

/// One fused key, identified by where it first occurs so callers can reuse
/// their own key objects (the Python layer returns the original `str`s
/// instead of allocating new ones).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fused {
    /// Index of the first ranking in which the key appears.
    pub ranking: usize,
    /// 0-based position of the key's first occurrence in that ranking.
    pub position: usize,
    /// Fused RRF score.
    pub score: f64,
    /// Best 1-based rank of the key across all rankings (a tie-breaker).
    pub best_rank: usize,
    /// Sum of `weight / (AGREEMENT_K + rank)` over the rankings holding the key (a tie-breaker).
    pub agreement: f64,
}

/// The `k` of the agreement tie-breaker (RRF's customary 60).
pub const AGREEMENT_K: f64 = 60.0;

/// Per-key accumulator while scanning the rankings.
struct Acc {
    score: f64,
    best_rank: usize,
    agreement: f64,
    first_ranking: usize,
    first_position: usize,
    /// Last ranking that contributed, to skip repeats within one ranking
    /// without a per-ranking set.
    last_ranking: usize,
}

/// Validate `k` and `weights` exactly like the Python reference does, in the
/// same order, so both raise the same error for the same input.
pub fn validate(k: f64, weights: Option<&[f64]>, n_rankings: usize) -> Result<(), NativeError> {
    if !(k.is_finite() && k > 0.0) {
        return Err(NativeError::InvalidK);
    }
    if let Some(w) = weights {
        if w.len() != n_rankings {
            return Err(NativeError::WeightsLength {
                weights: w.len(),
                rankings: n_rankings,
            });
        }
        if let Some(index) = w.iter().position(|x| !(x.is_finite() && *x >= 0.0)) {
            return Err(NativeError::InvalidWeight { index });
        }
    }
    Ok(())
}

/// `limit` as Python passes it, checked (`None` keeps every key).
pub fn check_limit(limit: Option<i64>) -> Result<Option<usize>, NativeError> {
    limit
        .map(|n| count_at_least(n, 0, NativeError::NegativeLimit))
        .transpose()
}

/// Fuse `rankings` (each best-first) with reciprocal-rank fusion.
///
/// Rank `r` (1-based) in ranking `i` contributes `weights[i] / (k + r)`
/// (weight 1.0 when `weights` is `None`). Returns at most `limit` entries,
/// sorted by the total order described in the module docs.
pub fn rrf_fuse<R, S>(
    rankings: &[R],
    k: f64,
    weights: Option<&[f64]>,
    limit: Option<usize>,
) -> Result<Vec<Fused>, NativeError>
where
    R: AsRef<[S]>,
    S: AsRef<str>,
{
    validate(k, weights, rankings.len())?;
    // `rank as f64` is exact for any realistic list length (< 2^53),
    // matching Python's int -> float promotion in `k + rank`.
    Ok(fuse_by(rankings, weights, limit, |i, pos| {
        weights.map_or(1.0, |w| w[i]) / (k + (pos + 1) as f64)
    }))
}

/// Shared accumulation and ordering of every fusion rule: `contribution(i,
/// pos)` is what the first occurrence of a key at 0-based `pos` of ranking
/// `i` adds to that key's score (summed in ranking order from 0.0).
pub(crate) fn fuse_by<R, S, F>(
    rankings: &[R],
    weights: Option<&[f64]>,
    limit: Option<usize>,
    contribution: F,
) -> Vec<Fused>
where
    R: AsRef<[S]>,
    S: AsRef<str>,
    F: Fn(usize, usize) -> f64,
{
    let total: usize = rankings.iter().map(|r| r.as_ref().len()).sum();
    let mut acc: HashMap<&str, Acc> = HashMap::with_capacity(total);

    for (i, ranking) in rankings.iter().enumerate() {
        for (pos, key) in ranking.as_ref().iter().enumerate() {
            let rank = pos + 1;
            match acc.entry(key.as_ref()) {
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(Acc {
                        score: 0.0 + contribution(i, pos),
                        best_rank: rank,
                        agreement: 0.0
                            + weights.map_or(1.0, |w| w[i]) / (AGREEMENT_K + rank as f64),
                        first_ranking: i,
                        first_position: pos,
                        last_ranking: i,
                    });
                }
                std::collections::hash_map::Entry::Occupied(mut e) => {
                    let a = e.get_mut();
                    if a.last_ranking == i {
                        continue; // repeat within this ranking: first position wins
                    }
                    a.last_ranking = i;
                    a.score += contribution(i, pos);
                    a.best_rank = a.best_rank.min(rank);
                    a.agreement += weights.map_or(1.0, |w| w[i]) / (AGREEMENT_K + rank as f64);
                }
            }
        }
    }

    let mut out: Vec<(&str, Fused)> = acc
        .into_iter()
        .map(|(key, a)| {
            (
                key,
                Fused {
                    ranking: a.first_ranking,
                    position: a.first_position,
                    score: a.score,
                    best_rank: a.best_rank,
                    agreement: a.agreement,
                },
            )
        })
        .collect();

    let cmp = |a: &(&str, Fused), b: &(&str, Fused)| -> Ordering {
        b.1.score
            .total_cmp(&a.1.score)
            .then(a.1.best_rank.cmp(&b.1.best_rank))
            .then(b.1.agreement.total_cmp(&a.1.agreement))
            .then(a.1.ranking.cmp(&b.1.ranking))
            .then(a.0.cmp(b.0))
    };

    // Keys are unique, so `cmp` is a strict total order and unstable sorting /
    // selection is still deterministic.
    match limit {
        Some(n) if n < out.len() => {
            if n == 0 {
                out.clear();
            } else {
                out.select_nth_unstable_by(n - 1, cmp);
                out.truncate(n);
            }
        }
        _ => {}
    }
    out.sort_unstable_by(cmp);
    out.into_iter().map(|(_, f)| f).collect()
}

/// Convenience wrapper returning `(key, score)` pairs; used by tests and by
/// Rust callers that do not need positions.
pub fn rrf_fuse_keys<R, S>(
    rankings: &[R],
    k: f64,
    weights: Option<&[f64]>,
    limit: Option<usize>,
) -> Result<Vec<(String, f64)>, NativeError>
where
    R: AsRef<[S]>,
    S: AsRef<str>,
{
    let fused = rrf_fuse(rankings, k, weights, limit)?;
    Ok(fused
        .into_iter()
        .map(|f| {
            let key = rankings[f.ranking].as_ref()[f.position].as_ref().to_owned();
            (key, f.score)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(out: &[(String, f64)]) -> Vec<&str> {
        out.iter().map(|(k, _)| k.as_str()).collect()
    }

    #[test]
    fn single_ranking_keeps_order_and_scores() {
        let out = rrf_fuse_keys(&[vec!["a", "b", "c"]], 60.0, None, None).unwrap();
        assert_eq!(keys(&out), ["a", "b", "c"]);
        assert_eq!(out[0].1, 1.0 / 61.0);
        assert_eq!(out[2].1, 1.0 / 63.0);
    }

    #[test]
    fn scores_sum_in_ranking_order() {
        let r = [vec!["x", "y"], vec!["y", "x"], vec!["x"]];
        let out = rrf_fuse_keys(&r, 1.0, Some(&[0.3, 0.7, 0.1]), None).unwrap();
        let x: f64 = 0.0 + 0.3 / 2.0 + 0.7 / 3.0 + 0.1 / 2.0;
        let y: f64 = 0.0 + 0.3 / 3.0 + 0.7 / 2.0;
        let get = |k: &str| out.iter().find(|(kk, _)| kk == k).unwrap().1;
        assert_eq!(get("x").to_bits(), x.to_bits());
        assert_eq!(get("y").to_bits(), y.to_bits());
    }

    #[test]
    fn duplicates_within_ranking_count_once_without_shifting() {
        let out = rrf_fuse_keys(&[vec!["a", "a", "b"]], 60.0, None, None).unwrap();
        assert_eq!(keys(&out), ["a", "b"]);
        assert_eq!(out[0].1, 1.0 / 61.0);
        assert_eq!(out[1].1, 1.0 / 63.0, "b keeps its original rank 3");
    }

    #[test]
    fn tie_breaks_best_rank_then_first_ranking_then_key() {
        // "b" and "a" tie on score (1/61 + 1/62 each), best rank 1 and first
        // ranking 0, so the key decides.
        let out = rrf_fuse_keys(&[vec!["b", "a"], vec!["a", "b"]], 60.0, None, None).unwrap();
        assert_eq!(keys(&out), ["a", "b"]);
        assert_eq!(out[0].1, out[1].1);

        // Same score and best rank; "b" is first seen in ranking 0, so it
        // beats the smaller key "a" first seen in ranking 1.
        let out = rrf_fuse_keys(&[vec!["b"], vec!["a"]], 60.0, None, None).unwrap();
        assert_eq!(keys(&out), ["b", "a"]);

        // Zero weights make every score 0.0, exposing the later tie-breakers.
        // (score, best rank, first ranking): z=(0,1,0), y=(0,1,0), x=(0,2,1);
        // z and y tie on all three, so the key decides: "y" < "z".
        let out = rrf_fuse_keys(
            &[vec!["z", "y"], vec!["y", "x"]],
            60.0,
            Some(&[0.0, 0.0]),
            None,
        )
        .unwrap();
        assert_eq!(keys(&out), ["y", "z", "x"]);

        // Best rank beats first-ranking index.
        let out =
            rrf_fuse_keys(&[vec!["p", "q"], vec!["r"]], 60.0, Some(&[0.0, 0.0]), None).unwrap();
        assert_eq!(keys(&out), ["p", "r", "q"]);
    }

    #[test]
    fn limit_truncates_consistently() {
        let r: Vec<Vec<String>> = (0..5)
            .map(|i| {
                (0..50)
                    .map(|j| format!("k{}", (i * 7 + j * 3) % 60))
                    .collect()
            })
            .collect();
        let full = rrf_fuse_keys(&r, 10.0, None, None).unwrap();
        for n in [0, 1, 2, 10, 59, 60, 61, 1000] {
            let part = rrf_fuse_keys(&r, 10.0, None, Some(n)).unwrap();
            assert_eq!(part, full[..n.min(full.len())].to_vec(), "limit={n}");
        }
    }

    #[test]
    fn empty_inputs() {
        let none: [Vec<&str>; 0] = [];
        assert!(rrf_fuse_keys(&none, 60.0, None, None).unwrap().is_empty());
        let empties = [Vec::<&str>::new(), vec![]];
        assert!(rrf_fuse_keys(&empties, 60.0, None, None)
            .unwrap()
            .is_empty());
        assert!(rrf_fuse_keys(&empties, 60.0, Some(&[1.0, 1.0]), None)
            .unwrap()
            .is_empty());
    }

    #[test]
    fn validation_errors() {
        let r = [vec!["a"], vec!["b"]];
        for k in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(matches!(
                rrf_fuse_keys(&r, k, None, None),
                Err(NativeError::InvalidK)
            ));
        }
        assert_eq!(
            rrf_fuse_keys(&r, 60.0, Some(&[1.0]), None)
                .unwrap_err()
                .to_string(),
            "weights has 1 entries but there are 2 rankings"
        );
        assert_eq!(
            rrf_fuse_keys(&r, 60.0, Some(&[1.0, -0.5]), None)
                .unwrap_err()
                .to_string(),
            "weights[1] must be finite and >= 0"
        );
        assert!(rrf_fuse_keys(&r, 60.0, Some(&[f64::NAN, 1.0]), None).is_err());
        assert_eq!(
            NativeError::InvalidK.to_string(),
            "k must be finite and > 0"
        );
        assert_eq!(check_limit(None).unwrap(), None);
        assert_eq!(check_limit(Some(0)).unwrap(), Some(0));
        assert_eq!(
            check_limit(Some(-1)).unwrap_err().to_string(),
            "limit must be >= 0"
        );
    }

    #[test]
    fn positions_point_at_first_occurrence() {
        let r = [vec!["a", "b"], vec!["c", "b", "b"]];
        let out = rrf_fuse(&r, 60.0, None, None).unwrap();
        for f in &out {
            let key = r[f.ranking][f.position];
            let first = r
                .iter()
                .enumerate()
                .find_map(|(i, rk)| rk.iter().position(|k| *k == key).map(|p| (i, p)))
                .unwrap();
            assert_eq!((f.ranking, f.position), first);
        }
    }
}
