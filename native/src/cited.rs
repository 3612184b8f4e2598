//! Per-sentence citations: the sentences of a text ([`crate::sentences`]) with
//! the block numbers each one cites ([`crate::markers`]). Kept apart from both
//! so that sentence splitting (which must recognise markers) and marker
//! parsing do not depend on each other.

use crate::markers::citations_in;
use crate::sentences::split_chars;

/// One sentence with the block numbers it cites.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CitedSentence {
    pub start: usize,
    pub end: usize,
    /// Cited numbers in order of first appearance, without duplicates.
    pub citations: Vec<u32>,
}

/// Split `t` into sentences ([`split_chars`]) and list each one's citations.
pub fn parse_citations_chars(t: &[char]) -> Vec<CitedSentence> {
    split_chars(t)
        .into_iter()
        .map(|(start, end)| CitedSentence {
            start,
            end,
            citations: citations_in(&t[start..end]),
        })
        .collect()
}

/// [`parse_citations_chars`] over a `&str` (offsets are char indexes).
pub fn parse_citations(text: &str) -> Vec<CitedSentence> {
    let chars: Vec<char> = text.chars().collect();
    parse_citations_chars(&chars)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_citations_per_sentence() {
        let got = parse_citations("It is red. [1] Next one [2, 1]. Done.");
        assert_eq!(
            got,
            [
                CitedSentence {
                    start: 0,
                    end: 14,
                    citations: vec![1]
                },
                CitedSentence {
                    start: 15,
                    end: 31,
                    citations: vec![2, 1]
                },
                CitedSentence {
                    start: 32,
                    end: 37,
                    citations: vec![]
                },
            ]
        );
        assert!(parse_citations(" \n ").is_empty());
    }
}
