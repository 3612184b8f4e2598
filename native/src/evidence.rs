//! Evidence scoring: does retrieval's best candidate stand out, and which
//! sentences of the retrieved blocks best answer the query (for extractive
//! answers).
//!
//! Float results are bit-identical to `testkit/native_reference.py`: the same
//! IEEE-754 operations run in the same order (sequential sums from `0.0`, no
//! fused multiply-add, correctly rounded `sqrt`).

use std::collections::HashMap;

use crate::chars::{fold_into, word_spans};
use crate::error::{count_at_least, NativeError};
use crate::lexicon::stem;
use crate::sentences::split_chars;

/// Lower bound on the background spread in [`evidence_contrast`]. Without it
/// a background of (nearly) equal similarities, e.g. a tiny corpus or many
/// duplicate chunks, gives a spread of ~0 and the ratio explodes to huge or
/// infinite values driven by float noise; 0.01 treats any spread below one
/// hundredth of a similarity unit as "no spread", so a best hit 0.05 above a
/// flat background scores 5, not 1e15.
pub const CONTRAST_STD_FLOOR: f64 = 0.01;

/// How many (floored) standard deviations the best similarity lies above the
/// mean of the others: `(top - mean) / max(std, 0.01)` over the values sorted
/// descending (IEEE total order), `top` the first, background the rest;
/// population standard deviation; `0.0` for fewer than two values.
pub fn evidence_contrast(similarities: &[f64]) -> Result<f64, NativeError> {
    if similarities.iter().any(|x| !x.is_finite()) {
        return Err(NativeError::NonFiniteSimilarity);
    }
    if similarities.len() < 2 {
        return Ok(0.0);
    }
    let mut sorted = similarities.to_vec();
    // Equal under `total_cmp` means equal bits, so unstable sorting is exact.
    sorted.sort_unstable_by(|a, b| b.total_cmp(a));
    let (top, background) = (sorted[0], &sorted[1..]);
    let n = background.len() as f64;
    let mut total = 0.0;
    for &x in background {
        total += x;
    }
    let mean = total / n;
    let mut squares = 0.0;
    for &x in background {
        let d = x - mean;
        squares += d * d;
    }
    let std = (squares / n).sqrt();
    Ok((top - mean) / std.max(CONTRAST_STD_FLOOR))
}

/// Query words ignored when scoring sentences: `common/lexicon.py`'s `STOP_WORDS`
/// of at least [`MIN_TERM_CHARS`] characters (shorter words are dropped anyway;
/// `tests/unit/test_lexicon.py` checks that the two lists agree).
#[rustfmt::skip]
pub const STOP_WORDS: [&str; 174] = [
    "about", "above", "according", "actually", "after", "again", "against", "all", "also", "and",
    "any", "anything", "are", "aren", "basically", "because", "been", "before", "being", "below",
    "between", "bit", "both", "but", "call", "called", "can", "could", "couldn", "define",
    "describe", "did", "didn", "does", "doesn", "doing", "don", "down", "during", "each",
    "exactly", "explain", "few", "find", "for", "from", "further", "give", "had", "happen",
    "happens", "has", "have", "having", "her", "here", "hers", "herself", "him", "himself", "his",
    "how", "hows", "into", "isn", "its", "itself", "just", "kind", "kindly", "know", "let", "list",
    "lot", "many", "may", "mean", "meaning", "means", "might", "more", "most", "much", "must",
    "myself", "name", "need", "nor", "not", "now", "off", "once", "one", "ones", "only", "other",
    "our", "ours", "ourselves", "out", "over", "own", "please", "provide", "really", "regarding",
    "said", "same", "say", "says", "shall", "she", "should", "shouldn", "show", "some",
    "something", "sort", "such", "summarise", "summarize", "tell", "than", "that", "the", "their",
    "theirs", "them", "themselves", "then", "there", "these", "they", "thing", "things", "this",
    "those", "through", "too", "type", "under", "until", "use", "used", "uses", "using", "very",
    "want", "was", "wasn", "way", "ways", "were", "weren", "what", "whats", "when", "where",
    "which", "while", "who", "whom", "whose", "why", "will", "with", "won", "would", "wouldn",
    "you", "your", "yours", "yourself", "yourselves",
];

/// Minimum length (characters, before folding) of a query word to be a term.
pub const MIN_TERM_CHARS: usize = 3;
/// Sentences with fewer words are never selected.
pub const MIN_SENTENCE_WORDS: usize = 4;
/// Weight of the rank bonus `BONUS * (1 / (block + 1))`.
pub const BLOCK_BONUS: f64 = 0.001;

/// One selected sentence: `block` (0-based), char offsets within that block,
/// and its score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Evidence {
    pub block: usize,
    pub start: usize,
    pub end: usize,
    pub score: f64,
}

/// Distinct query terms, each mapped to its first-appearance index: the
/// [`stem`]s of the case-folded `\w` runs of at least [`MIN_TERM_CHARS`]
/// characters that are not [`STOP_WORDS`] (tested on the folded word, before
/// stemming). Stems, because the Python side (`common.lexicon.stem`, used by
/// chunking, generation and the agent) matches words by stem: "backflush ...
/// week" must find "Backflushing ... weekly".
pub fn query_terms(query: &str) -> HashMap<String, usize> {
    let chars: Vec<char> = query.chars().collect();
    let mut terms = HashMap::new();
    let mut word = String::new();
    for (start, end) in word_spans(&chars) {
        if end - start < MIN_TERM_CHARS {
            continue;
        }
        word.clear();
        chars[start..end]
            .iter()
            .for_each(|&c| fold_into(c, &mut word));
        if !STOP_WORDS.contains(&word.as_str()) {
            let next = terms.len();
            terms.entry(stem(&word).to_owned()).or_insert(next);
        }
    }
    terms
}

/// `max_sentences` as Python passes it, checked (`>= 0`).
pub fn check_max_sentences(max_sentences: i64) -> Result<usize, NativeError> {
    count_at_least(max_sentences, 0, NativeError::NegativeMaxSentences)
}

/// Pick up to `max_sentences` sentences of `blocks` that share the most
/// query terms. A sentence (see [`split_chars`]) with at least
/// [`MIN_SENTENCE_WORDS`] words has `overlap` = distinct query terms (stems,
/// see [`query_terms`]) among the [`stem`]s of its folded words / number of
/// query terms; it is kept when `overlap >= min_overlap` and scored
/// `overlap + 0.001 * (1 / (block + 1))`.
/// Ordered by score descending, then block, then start. No terms -> empty.
pub fn select_evidence_sentences<S: AsRef<str>>(
    query: &str,
    blocks: &[S],
    max_sentences: usize,
    min_overlap: f64,
) -> Vec<Evidence> {
    let terms = query_terms(query);
    if terms.is_empty() || max_sentences == 0 {
        return Vec::new();
    }
    let n_terms = terms.len() as f64;
    // `seen[i] == stamp` marks term `i` as found in the current sentence.
    let mut seen = vec![0usize; terms.len()];
    let mut stamp = 0;
    let mut word = String::new();
    let mut kept = Vec::new();
    for (block, text) in blocks.iter().enumerate() {
        let chars: Vec<char> = text.as_ref().chars().collect();
        for (start, end) in split_chars(&chars) {
            stamp += 1;
            let (mut words, mut matched) = (0, 0usize);
            for (a, b) in word_spans(&chars[start..end]) {
                words += 1;
                word.clear();
                chars[start + a..start + b]
                    .iter()
                    .for_each(|&c| fold_into(c, &mut word));
                if let Some(&i) = terms.get(stem(&word)) {
                    if seen[i] != stamp {
                        seen[i] = stamp;
                        matched += 1;
                    }
                }
            }
            if words < MIN_SENTENCE_WORDS {
                continue;
            }
            let overlap = matched as f64 / n_terms;
            if overlap >= min_overlap {
                let score = overlap + BLOCK_BONUS * (1.0 / (block as f64 + 1.0));
                kept.push(Evidence {
                    block,
                    start,
                    end,
                    score,
                });
            }
        }
    }
    // (block, start) is unique, so this is a strict total order.
    kept.sort_unstable_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then(a.block.cmp(&b.block))
            .then(a.start.cmp(&b.start))
    });
    kept.truncate(max_sentences);
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contrast_formula_and_order() {
        let got = evidence_contrast(&[0.5, 0.9, 0.7, 0.6]).unwrap();
        let mean = (0.0 + 0.7 + 0.6 + 0.5) / 3.0;
        let squares = 0.0
            + (0.7 - mean) * (0.7 - mean)
            + (0.6 - mean) * (0.6 - mean)
            + (0.5 - mean) * (0.5 - mean);
        let want = (0.9 - mean) / (squares / 3.0f64).sqrt().max(0.01);
        assert_eq!(got.to_bits(), want.to_bits());
    }

    #[test]
    fn contrast_floor_small_inputs_and_errors() {
        assert_eq!(
            evidence_contrast(&[0.85, 0.8, 0.8]).unwrap(),
            (0.85 - 0.8) / 0.01
        );
        assert_eq!(evidence_contrast(&[]).unwrap(), 0.0);
        assert_eq!(evidence_contrast(&[0.3]).unwrap(), 0.0);
        assert_eq!(evidence_contrast(&[0.3, 0.3]).unwrap(), 0.0);
        assert!(evidence_contrast(&[-0.0, 0.0]).unwrap().is_sign_positive());
        for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            for values in [&[0.1, bad][..], &[bad]] {
                assert!(matches!(
                    evidence_contrast(values),
                    Err(NativeError::NonFiniteSimilarity)
                ));
            }
        }
        assert_eq!(
            NativeError::NonFiniteSimilarity.to_string(),
            "similarities must be finite"
        );
    }

    #[test]
    fn query_terms_fold_filter_and_dedupe() {
        let terms = query_terms("What is the Dosage of ASPIRIN for adults? aspirin, DOSAGE; ok");
        let mut got: Vec<_> = terms.into_iter().collect();
        got.sort_by_key(|(_, i)| *i);
        let names: Vec<_> = got.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(names, ["dosag", "aspirin", "adult"]);
        assert!(query_terms("is it so? the and").is_empty());
        // Distinct stems: "Adult" and "adults" are one term; the stop-word
        // test is on the folded word, so "Describes" stays (as "describ").
        let terms = query_terms("Adult adults describe Describes weekly");
        let mut got: Vec<_> = terms.into_iter().collect();
        got.sort_by_key(|(_, i)| *i);
        assert_eq!(
            got,
            [
                ("adult".into(), 0),
                ("describ".into(), 1),
                ("week".into(), 2)
            ]
        );
    }

    #[test]
    fn selection_matches_stems() {
        let blocks = [
            "Descale the Atlas-7 every month with the supplied descaler.",
            "Backflushing with Cafiza detergent is recommended weekly.",
        ];
        let query = "Is it fine to backflush the Atlas-7 once a week?";
        // Terms (stems): fin, backflush, atla, week ("once" is a stop word).
        let got = select_evidence_sentences(query, &blocks, 3, 0.2);
        let view: Vec<_> = got.iter().map(|e| (e.block, e.start, e.end)).collect();
        assert_eq!(view, [(1, 0, 57), (0, 0, 59)]);
        assert_eq!(
            got[0].score.to_bits(),
            (2.0f64 / 4.0 + 0.001 * (1.0 / 2.0f64)).to_bits()
        );
        assert_eq!(
            got[1].score.to_bits(),
            (1.0f64 / 4.0 + 0.001 * (1.0 / 1.0f64)).to_bits()
        );
    }

    #[test]
    fn selection_scores_filters_and_orders() {
        let blocks = [
            "Aspirin dosage for adults is 500 mg. Short one. Unrelated text about cats here.",
            "The usual aspirin dosage for adults varies a lot. Aspirin helps.",
        ];
        let got = select_evidence_sentences("aspirin dosage adults", &blocks, 3, 0.2);
        let view: Vec<_> = got.iter().map(|e| (e.block, e.start, e.end)).collect();
        assert_eq!(view, [(0, 0, 36), (1, 0, 49)]);
        assert_eq!(
            got[0].score.to_bits(),
            (1.0 + 0.001 * (1.0 / 1.0f64)).to_bits()
        );
        assert_eq!(
            got[1].score.to_bits(),
            (3.0f64 / 3.0 + 0.001 * (1.0 / 2.0f64)).to_bits()
        );
        let one = select_evidence_sentences("aspirin dosage adults", &blocks, 1, 0.2);
        assert_eq!(one, got[..1]);
        assert!(select_evidence_sentences("aspirin dosage adults", &blocks, 0, 0.2).is_empty());
        assert_eq!(check_max_sentences(0).unwrap(), 0);
        assert_eq!(
            check_max_sentences(-1).unwrap_err().to_string(),
            "max_sentences must be >= 0"
        );
        assert!(select_evidence_sentences("the of", &blocks, 3, 0.0).is_empty());
        assert!(select_evidence_sentences("cats", &blocks, 3, f64::NAN).is_empty());
        let all = select_evidence_sentences("zebra", &blocks, 9, 0.0);
        assert_eq!(
            all.len(),
            3,
            "min_overlap 0 keeps every sentence of 4+ words"
        );
    }
}
