//! Score fusion: combine rankings by their min-max normalised scores.
//!
//! Reciprocal-rank fusion throws away how confident each leg is: a BM25 hit
//! that towers over the rest of its list counts the same as a narrow win.
//! On Docent's evaluation corpora, a weighted sum of per-leg min-max
//! normalised scores ranked better than RRF at every k we tried (see
//! Documentation/evaluation.md), so the engine uses it by default and keeps
//! RRF as an option. De-duplication, summation order and tie-breaking are
//! shared with [`crate::fusion`], so both rules are equally reproducible.
//!
//! Normalisation per ranking: `(v - lo) / (hi - lo)` with `lo`/`hi` the
//! minimum and maximum of that ranking's scores, or `1.0` for every item when
//! all its scores are equal. With [`Floor::Mean`] the floor is the ranking's
//! mean instead of its minimum and anything below the mean counts 0: a leg
//! whose best hit barely stands out of its own list then adds little, where
//! min-max would stretch it to the full range (Documentation/evaluation.md:
//! rfc, pydocs and atlas7 gained, acq lost a little). A key repeated within
//! one ranking counts only at its first position.

use std::str::FromStr;

use crate::error::NativeError;
use crate::fusion::{check_limit, fuse_by, validate, Fused};

/// Where a ranking's normalised scale starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Floor {
    /// `(v - min) / (max - min)`.
    Min,
    /// `max(0, (v - mean) / (max - mean))`, the mean a left-to-right sum over the ranking.
    Mean,
}

impl FromStr for Floor {
    type Err = NativeError;

    /// Parse the Python spelling (`"min"` or `"mean"`).
    fn from_str(name: &str) -> Result<Floor, NativeError> {
        match name {
            "min" => Ok(Floor::Min),
            "mean" => Ok(Floor::Mean),
            _ => Err(NativeError::Floor),
        }
    }
}

/// Check the arguments as Python passes them, in the order the Python
/// reference does (floor, weights, limit, scores), before any key is read;
/// returns the parsed floor and limit.
pub fn check_args<R, S>(
    floor: &str,
    rankings: &[R],
    scores: &[Vec<f64>],
    weights: Option<&[f64]>,
    limit: Option<i64>,
) -> Result<(Floor, Option<usize>), NativeError>
where
    R: AsRef<[S]>,
{
    let floor = floor.parse()?;
    validate(1.0, weights, rankings.len())?;
    let limit = check_limit(limit)?;
    validate_scores(rankings, scores, weights)?;
    Ok((floor, limit))
}

/// Check weights and scores in the order the Python reference does.
pub fn validate_scores<R, S>(
    rankings: &[R],
    scores: &[Vec<f64>],
    weights: Option<&[f64]>,
) -> Result<(), NativeError>
where
    R: AsRef<[S]>,
{
    validate(1.0, weights, rankings.len())?;
    if scores.len() != rankings.len() {
        return Err(NativeError::ScoresCount {
            scores: scores.len(),
            rankings: rankings.len(),
        });
    }
    for (index, (list, ranking)) in scores.iter().zip(rankings).enumerate() {
        if list.len() != ranking.as_ref().len() {
            return Err(NativeError::ScoresLength {
                index,
                scores: list.len(),
                keys: ranking.as_ref().len(),
            });
        }
        if list.iter().any(|v| !v.is_finite()) {
            return Err(NativeError::NonFiniteScore { index });
        }
    }
    Ok(())
}

/// Fuse rankings by weighted, per-ranking normalised scores (min-max by default).
pub fn score_fuse<R, S>(
    rankings: &[R],
    scores: &[Vec<f64>],
    weights: Option<&[f64]>,
    limit: Option<usize>,
) -> Result<Vec<Fused>, NativeError>
where
    R: AsRef<[S]>,
    S: AsRef<str>,
{
    score_fuse_with(rankings, scores, weights, limit, Floor::Min)
}

/// [`score_fuse`] with an explicit [`Floor`].
pub fn score_fuse_with<R, S>(
    rankings: &[R],
    scores: &[Vec<f64>],
    weights: Option<&[f64]>,
    limit: Option<usize>,
    floor: Floor,
) -> Result<Vec<Fused>, NativeError>
where
    R: AsRef<[S]>,
    S: AsRef<str>,
{
    validate_scores(rankings, scores, weights)?;
    let bounds: Vec<(f64, f64)> = scores
        .iter()
        .map(|list| {
            let hi = list.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let lo = match floor {
                Floor::Min => list.iter().copied().fold(f64::INFINITY, f64::min),
                Floor::Mean => {
                    let mut sum = 0.0;
                    for v in list {
                        sum += v;
                    }
                    sum / list.len().max(1) as f64
                }
            };
            (lo, hi)
        })
        .collect();
    Ok(fuse_by(rankings, weights, limit, |i, pos| {
        let (lo, hi) = bounds[i];
        let norm = if hi > lo {
            let x = (scores[i][pos] - lo) / (hi - lo);
            if x > 0.0 {
                x
            } else {
                0.0
            }
        } else {
            1.0
        };
        weights.map_or(1.0, |w| w[i]) * norm
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(r: &[Vec<&str>], s: &[Vec<f64>], w: Option<&[f64]>) -> Vec<(String, f64)> {
        score_fuse(r, s, w, None)
            .unwrap()
            .into_iter()
            .map(|f| (r[f.ranking][f.position].to_owned(), f.score))
            .collect()
    }

    #[test]
    fn confident_leg_wins_over_shared_mediocre_hits() {
        // RRF ties a and b (ranks 1+2 each); the towering BM25 score of `a` decides.
        let rankings = vec![vec!["a", "b", "c"], vec!["b", "a", "c"]];
        let scores = vec![vec![10.0, 2.0, 1.0], vec![0.50, 0.49, 0.10]];
        let out = run(&rankings, &scores, None);
        assert_eq!(
            out.iter().map(|o| o.0.as_str()).collect::<Vec<_>>(),
            ["a", "b", "c"]
        );
        assert!((out[0].1 - 1.975).abs() < 1e-12);
    }

    #[test]
    fn equal_scores_normalise_to_one_and_weights_scale() {
        let rankings = vec![vec!["x", "y"]];
        let out = run(&rankings, &[vec![3.0, 3.0]], Some(&[0.5]));
        assert_eq!(out, vec![("x".to_owned(), 0.5), ("y".to_owned(), 0.5)]);
    }

    #[test]
    fn mean_floor_zeroes_the_lower_half_and_keeps_a_standout() {
        // Leg 0: `a` stands far above its list; leg 1: flat, its best barely above the mean.
        let rankings = vec![vec!["a", "b", "c", "d"], vec!["b", "c", "d", "a"]];
        let scores = vec![vec![10.0, 2.0, 1.0, 1.0], vec![0.52, 0.51, 0.50, 0.49]];
        let out = score_fuse_with(&rankings, &scores, None, None, Floor::Mean).unwrap();
        let score_of = |key: &str| {
            out.iter()
                .find(|f| rankings[f.ranking][f.position] == key)
                .unwrap()
                .score
        };
        assert_eq!(
            score_of("a"),
            1.0,
            "a: its standout counts in full, leg 1 (below its mean) adds 0"
        );
        assert!(
            (score_of("b") - (0.0 + 1.0)).abs() < 1e-12,
            "b: below leg 0's mean (3.5) counts 0"
        );
        let minmax = run(&rankings, &scores, None);
        assert_eq!(
            minmax[0].0, "b",
            "min-max stretches the flat leg and lets b win"
        );
        assert!(minmax[0].1 > 1.1, "b: 1/9 from leg 0 on top of leg 1's 1.0");
        assert_eq!("mean".parse::<Floor>().ok(), Some(Floor::Mean));
        assert_eq!(
            "median".parse::<Floor>().unwrap_err().to_string(),
            "floor must be 'min' or 'mean'"
        );
    }

    #[test]
    fn an_exact_score_tie_goes_to_the_key_the_rankings_place_higher() {
        // "m" holds ranks (1, 3), "c" ranks (2, 1); both fuse to 0.5 (mean floor,
        // weights 0.5 each), and agreement 0.5/61 + 0.5/63 < 0.5/62 + 0.5/61 puts
        // "c" first although "m" is the smaller key from the same first ranking.
        let rankings = vec![vec!["m", "c"], vec!["c", "x", "m"]];
        let scores = vec![vec![2.664, 1.961], vec![1.988, 1.451, 0.803]];
        let out =
            score_fuse_with(&rankings, &scores, Some(&[0.5, 0.5]), None, Floor::Mean).unwrap();
        let keys: Vec<_> = out
            .iter()
            .map(|f| rankings[f.ranking][f.position])
            .collect();
        assert_eq!(keys[..2], ["c", "m"]);
        assert_eq!(out[0].score, out[1].score);
        // Agreement is weighted: two rankings of weight 0.5 (one leg ranked twice)
        // count as much as one of weight 1, so neither side wins by having more
        // rankings, and the first ranking index decides.
        let rankings = vec![vec!["f"], vec!["f"], vec!["v"]];
        let scores = vec![vec![1.0], vec![1.0], vec![1.0]];
        let out = score_fuse_with(
            &rankings,
            &scores,
            Some(&[0.5, 0.5, 1.0]),
            None,
            Floor::Mean,
        )
        .unwrap();
        assert_eq!(out[0].score, out[1].score);
        assert_eq!(out[0].agreement, out[1].agreement); // 2 x 0.5/61 == 1/61: falls to the ranking index
        assert_eq!(rankings[out[0].ranking][out[0].position], "f");
    }

    #[test]
    fn repeats_count_once_and_errors_are_named() {
        let rankings = vec![vec!["a", "a", "b"]];
        let out = run(&rankings, &[vec![1.0, 1.0, 0.0]], None);
        assert_eq!(out, vec![("a".to_owned(), 1.0), ("b".to_owned(), 0.0)]);
        let bad = score_fuse(&rankings, &[vec![1.0]], None, None).unwrap_err();
        assert_eq!(
            bad.to_string(),
            "scores[0] has 1 entries but rankings[0] has 3"
        );
        let nan = score_fuse(&rankings, &[vec![1.0, f64::NAN, 0.0]], None, None).unwrap_err();
        assert_eq!(nan.to_string(), "scores[0] must be finite");
        let count = score_fuse(&rankings, &[], None, None).unwrap_err();
        assert_eq!(
            count.to_string(),
            "scores has 0 lists but there are 1 rankings"
        );
    }

    #[test]
    fn arguments_are_checked_floor_weights_limit_then_scores() {
        let r = [vec!["a"]];
        let message = |floor, s: &[Vec<f64>], w, limit| {
            check_args(floor, &r, s, w, limit).unwrap_err().to_string()
        };
        let nan = [vec![f64::NAN]];
        assert_eq!(
            message("max", &nan, Some(&[-1.0]), Some(-1)),
            "floor must be 'min' or 'mean'"
        );
        assert_eq!(
            message("min", &nan, Some(&[-1.0]), Some(-1)),
            "weights[0] must be finite and >= 0"
        );
        assert_eq!(message("min", &nan, None, Some(-1)), "limit must be >= 0");
        assert_eq!(
            message("mean", &nan, None, None),
            "scores[0] must be finite"
        );
        let ok = check_args("mean", &r, &[vec![1.0]], None, Some(3)).unwrap();
        assert_eq!(ok, (Floor::Mean, Some(3)));
    }
}
