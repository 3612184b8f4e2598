//! Citation checking of a generated answer against its numbered blocks.
//!
//! The answer is split into sentences ([`crate::sentences`]) and each one's
//! markers parsed ([`crate::markers`]). The checks, with 1-based block numbers:
//!
//! * **unknown**: cited numbers outside `1..=blocks.len()` (sorted, unique);
//! * **uncited**: sentences without any citation, except exempt ones: those
//!   whose text, with the citation markers cut out, has fewer than 2 words
//!   (maximal runs of `\w`), and headings (text starting with `#`);
//! * **bad quotes**: each double-quoted span of a sentence (`"..."` up to the
//!   next `"`, or `“...` up to the next `”`, scanned left to right; an opening
//!   mark without its closing mark is ignored) whose content has at least
//!   `min_quote_chars` characters is verified: its normalised content
//!   ([`crate::chars::normalise`]) must occur in the normalised text of one of
//!   the sentence's cited blocks that exist, or of any block when the sentence
//!   cites nothing. A sentence citing only unknown blocks cannot verify a quote.
//!
//! The answer is valid when nothing is unknown, uncited or badly quoted, and
//! at least one sentence cites something.

use crate::chars::{normalise, word_spans};
use crate::cited::{parse_citations_chars, CitedSentence};
use crate::error::{count_at_least, NativeError};
use crate::markers::for_each_marker;

/// A quotation that none of its candidate blocks contains.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadQuote {
    /// Index (0-based) of the sentence holding the quote.
    pub sentence: usize,
    /// The text between the quotation marks, verbatim.
    pub quote: String,
}

/// Result of [`validate_citations`]; see the module docs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CitationReport {
    pub sentences: Vec<CitedSentence>,
    pub unknown: Vec<u32>,
    pub uncited: Vec<usize>,
    pub bad_quotes: Vec<BadQuote>,
    pub valid: bool,
}

/// `min_quote_chars` as Python passes it, checked (`>= 1`); shared by
/// [`validate_citations`] and [`crate::claims::check_claims`].
pub fn check_min_quote_chars(min_quote_chars: i64) -> Result<usize, NativeError> {
    count_at_least(min_quote_chars, 1, NativeError::MinQuoteChars)
}

/// Whether a sentence without citations needs none (see the module docs).
fn is_exempt(t: &[char]) -> bool {
    if t.first() == Some(&'#') {
        return true;
    }
    let mut words = 0;
    let mut from = 0;
    let mut count = |segment: &[char]| words += word_spans(segment).count();
    for_each_marker(t, |start, end, _| {
        count(&t[from..start]);
        from = end;
    });
    count(&t[from..]);
    words < 2
}

/// Contents `(start, end)` of the quoted spans of `t` (marks excluded).
pub(crate) fn quotes(t: &[char]) -> Vec<(usize, usize)> {
    let mut found = Vec::new();
    // Once a closing mark is missing after some point, it is missing after
    // every later point too: remembering that keeps the scan linear.
    let (mut straight_left, mut curly_left) = (true, true);
    let mut p = 0;
    while p < t.len() {
        let (close, left) = match t[p] {
            '"' => ('"', &mut straight_left),
            '“' => ('”', &mut curly_left),
            _ => {
                p += 1;
                continue;
            }
        };
        let hit = if *left {
            t[p + 1..].iter().position(|&c| c == close)
        } else {
            None
        };
        match hit {
            Some(len) => {
                found.push((p + 1, p + 1 + len));
                p += len + 2;
            }
            None => {
                *left = false;
                p += 1;
            }
        }
    }
    found
}

/// Check `answer`'s citations against `blocks` (block `n` is `blocks[n - 1]`).
pub fn validate_citations<S: AsRef<str>>(
    answer: &str,
    blocks: &[S],
    min_quote_chars: usize,
) -> Result<CitationReport, NativeError> {
    if min_quote_chars < 1 {
        return Err(NativeError::MinQuoteChars);
    }
    let t: Vec<char> = answer.chars().collect();
    let sentences = parse_citations_chars(&t);
    // Blocks are normalised lazily: only quotes need them.
    let mut normalised: Vec<Option<String>> = vec![None; blocks.len()];
    let mut contains = |n: usize, quote: &str| {
        normalised[n]
            .get_or_insert_with(|| normalise(blocks[n].as_ref().chars()))
            .contains(quote)
    };

    let mut unknown = Vec::new();
    let mut uncited = Vec::new();
    let mut bad_quotes = Vec::new();
    for (index, sentence) in sentences.iter().enumerate() {
        let text = &t[sentence.start..sentence.end];
        unknown.extend(
            sentence
                .citations
                .iter()
                .filter(|&&n| n as usize > blocks.len()),
        );
        if sentence.citations.is_empty() && !is_exempt(text) {
            uncited.push(index);
        }
        for (start, end) in quotes(text) {
            if end - start < min_quote_chars {
                continue;
            }
            let quote = normalise(text[start..end].iter().copied());
            let found = if sentence.citations.is_empty() {
                (0..blocks.len()).any(|n| contains(n, &quote))
            } else {
                sentence
                    .citations
                    .iter()
                    .filter(|&&n| n as usize <= blocks.len())
                    .any(|&n| contains(n as usize - 1, &quote))
            };
            if !found {
                bad_quotes.push(BadQuote {
                    sentence: index,
                    quote: text[start..end].iter().collect(),
                });
            }
        }
    }
    unknown.sort_unstable();
    unknown.dedup();
    let cited = sentences.iter().any(|s| !s.citations.is_empty());
    let valid = cited && unknown.is_empty() && uncited.is_empty() && bad_quotes.is_empty();
    Ok(CitationReport {
        sentences,
        unknown,
        uncited,
        bad_quotes,
        valid,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const BLOCKS: [&str; 2] = [
        "The Eiffel Tower is  330 metres\ntall and was completed in 1889.",
        "Paris is the capital of France.",
    ];

    fn check(answer: &str) -> CitationReport {
        validate_citations(answer, &BLOCKS, 12).unwrap()
    }

    #[test]
    fn valid_answer() {
        let v = check("The tower is \"330 METRES tall\" [1]. Paris is the capital [2].");
        assert!(v.valid, "{v:?}");
        assert_eq!(v.sentences.len(), 2);
        assert_eq!(v.sentences[0].citations, [1]);
    }

    #[test]
    fn unknown_uncited_and_exempt() {
        let v = check("Claim one [3, 1]. Claim two without source. Ok.\n# Heading here\nSee [5].");
        assert_eq!(v.unknown, [3, 5]);
        assert_eq!(v.uncited, [1]);
        assert!(!v.valid);
        // Marker text does not count as words; glued words split around markers.
        let exempt = |s: &str| is_exempt(&s.chars().collect::<Vec<_>>());
        assert!(!exempt("Yes [x1]") && !exempt("Yes[1]no") && !exempt("a b"));
        assert!(exempt("Yes [1]") && exempt("[1, 2] [3-4]") && exempt("#") && exempt("- ok!"));
    }

    #[test]
    fn quotes_are_checked_against_cited_blocks_only() {
        let v = check("It was \"completed in 1889\" [2]. Also “the capital of France” [1, 9].");
        let quotes: Vec<_> = v
            .bad_quotes
            .iter()
            .map(|b| (b.sentence, b.quote.as_str()))
            .collect();
        assert_eq!(
            quotes,
            [(0, "completed in 1889"), (1, "the capital of France")]
        );
        // Uncited sentences are checked against every block; short quotes are skipped.
        let v = check("Paris is \"the capital of France\". It is \"short\" [1].");
        assert!(v.bad_quotes.is_empty());
        assert_eq!(v.uncited, [0]);
    }

    #[test]
    fn quote_scanning() {
        let q = |s: &str| {
            let t: Vec<char> = s.chars().collect();
            quotes(&t)
                .into_iter()
                .map(|(a, b)| t[a..b].iter().collect::<String>())
                .collect::<Vec<_>>()
        };
        assert_eq!(q("a \"b\" c “d \"e\" f” \"g"), ["b", "d \"e\" f"]);
        assert_eq!(q("”x“ \"\""), [""]);
        assert_eq!(q("“a “b” “c \"d\" “e"), ["a “b", "d"]);
        let many: String = "“\"".repeat(50_000);
        assert_eq!(q(&many).len(), 25_000, "linear even with unmatched marks");
    }

    #[test]
    fn empty_and_invalid_inputs() {
        let v = validate_citations("", &[] as &[&str], 1).unwrap();
        assert!(v.sentences.is_empty() && !v.valid);
        assert_eq!(
            validate_citations("x", &BLOCKS, 0).unwrap_err().to_string(),
            "min_quote_chars must be >= 1"
        );
        assert_eq!(check_min_quote_chars(1).unwrap(), 1);
        for bad in [0, -1] {
            assert!(matches!(
                check_min_quote_chars(bad),
                Err(NativeError::MinQuoteChars)
            ));
        }
        // No blocks: nothing can verify a quote.
        let v = validate_citations("He said \"hello\".", &[] as &[&str], 1).unwrap();
        assert_eq!(v.bad_quotes.len(), 1);
    }
}
