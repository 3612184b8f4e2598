//! The fact-level claim check: does each cited sentence say what its blocks say?
//!
//! `validate_citations` proves that a sentence *has* a citation; this proves
//! that the citation *backs* it. The answer is split and its citations parsed
//! exactly as `parse_citations` does. A sentence citing at least one existing
//! block (1-based, `n <= blocks.len()`) is checked against those blocks:
//!
//! * each fact ([`crate::facts`]) must occur in one of them: a number when one
//!   of its candidate values is among the block's values
//!   ([`crate::numbers::block_values`]), a date when the block has that date
//!   ([`crate::dates::block_dates`]), an identifier, code span or quoted term
//!   when its search text ([`search_text`]) is a substring of the block's,
//!   a name when its case fold occurs in the block's search text at a word
//!   start (not right after a letter or digit; `_` separates words, so
//!   `Northwind` is in `northwind_leave_policy.pdf`);
//! * its polarity must not be the opposite of the block sentences that match
//!   it strongly ([`crate::polarity`]).
//!
//! Other sentences are reported with no facts, no polarity and `supported`.

use std::collections::HashSet;

use crate::chars::is_word;
use crate::dates::{block_dates, Date};
use crate::facts::{prepare, search_text, sentence_facts, Key, Kind};
use crate::cited::parse_citations_chars;
use crate::numbers::block_values;
use crate::polarity::{answer_stance, evidence_stance, strong_share, Stance};
use crate::sentences::split_chars;
use crate::validate::ValidateError;

/// One fact of a sentence; offsets index the answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FactReport {
    pub kind: Kind,
    pub text: String,
    pub start: usize,
    pub end: usize,
    pub found: bool,
    /// The sentence's checked blocks that hold the fact, in citation order.
    pub cited: Vec<u32>,
}

/// The block sentence a checked sentence was compared with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Polarity {
    pub answer_negated: bool,
    pub evidence_negated: bool,
    pub block: u32,
    /// Offsets of the sentence within its block.
    pub start: usize,
    pub end: usize,
}

/// The check of one answer sentence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimReport {
    pub sentence: usize,
    pub start: usize,
    pub end: usize,
    /// The cited blocks that exist, in citation order: what was checked.
    pub blocks: Vec<u32>,
    pub facts: Vec<FactReport>,
    pub polarity: Option<Polarity>,
    pub supported: bool,
}

/// What the check needs of one block, built once per call.
struct BlockIndex {
    search: String,
    numbers: HashSet<String>,
    dates: HashSet<Date>,
    sentences: Vec<(usize, usize, Stance)>,
}

impl BlockIndex {
    fn build(text: &str) -> Self {
        let t: Vec<char> = text.chars().collect();
        let mut numbers = HashSet::new();
        block_values(&t, &mut numbers);
        let mut dates = HashSet::new();
        block_dates(&t, &mut dates);
        let sentences = split_chars(&t)
            .into_iter()
            .map(|(s, e)| (s, e, evidence_stance(&t[s..e])))
            .collect();
        BlockIndex {
            search: search_text(&t),
            numbers,
            dates,
            sentences,
        }
    }

    fn holds(&self, key: &Key) -> bool {
        match key {
            Key::Values(values) => values.iter().any(|v| self.numbers.contains(v)),
            Key::Date(date) => self.dates.contains(date),
            Key::Text(needle) => self.search.contains(needle.as_str()),
            Key::Name(needle) => at_word_start(&self.search, needle),
        }
    }
}

/// Whether `needle` occurs in `hay` where no letter or digit precedes it
/// (overlapping occurrences included).
fn at_word_start(hay: &str, needle: &str) -> bool {
    let mut from = 0;
    while let Some(offset) = hay[from..].find(needle) {
        let at = from + offset;
        if !hay[..at]
            .chars()
            .next_back()
            .is_some_and(|c| is_word(c) && c != '_')
        {
            return true;
        }
        from = at + hay[at..].chars().next().map_or(1, char::len_utf8);
    }
    false
}

/// The polarity comparison of a sentence with its checked blocks.
fn compare(answer: &Stance, checked: &[(u32, &BlockIndex)]) -> Option<Polarity> {
    if answer.conditional || answer.stems.is_empty() {
        return None;
    }
    // Best strong match overall, and best with the answer's own polarity.
    let mut best: Option<(usize, Polarity)> = None;
    let mut agreeing: Option<(usize, Polarity)> = None;
    for &(n, index) in checked {
        for (start, end, stance) in &index.sentences {
            let Some(shared) = strong_share(answer, stance) else {
                continue;
            };
            let found = Polarity {
                answer_negated: answer.negated,
                evidence_negated: stance.negated,
                block: n,
                start: *start,
                end: *end,
            };
            if stance.negated == answer.negated && agreeing.as_ref().is_none_or(|b| shared > b.0) {
                agreeing = Some((shared, found.clone()));
            }
            if best.as_ref().is_none_or(|b| shared > b.0) {
                best = Some((shared, found));
            }
        }
    }
    agreeing.or(best).map(|(_, p)| p)
}

/// Check every sentence of `answer` against `blocks` (block `n` is
/// `blocks[n - 1]`); see the module docs.
pub fn check_claims<S: AsRef<str>>(
    answer: &str,
    blocks: &[S],
    min_quote_chars: usize,
) -> Result<Vec<ClaimReport>, ValidateError> {
    if min_quote_chars < 1 {
        return Err(ValidateError::MinQuoteChars);
    }
    let t: Vec<char> = answer.chars().collect();
    let mut indexes: Vec<Option<BlockIndex>> = (0..blocks.len()).map(|_| None).collect();
    let mut reports = Vec::new();
    for (sentence, cited) in parse_citations_chars(&t).into_iter().enumerate() {
        let (start, end) = (cited.start, cited.end);
        let checked: Vec<u32> = cited
            .citations
            .iter()
            .copied()
            .filter(|&n| n as usize <= blocks.len())
            .collect();
        let mut report = ClaimReport {
            sentence,
            start,
            end,
            blocks: checked.clone(),
            facts: Vec::new(),
            polarity: None,
            supported: true,
        };
        if !checked.is_empty() {
            for &n in &checked {
                let slot = &mut indexes[n as usize - 1];
                if slot.is_none() {
                    *slot = Some(BlockIndex::build(blocks[n as usize - 1].as_ref()));
                }
            }
            let looked: Vec<(u32, &BlockIndex)> = checked
                .iter()
                .map(|&n| (n, indexes[n as usize - 1].as_ref().expect("built above")))
                .collect();
            let prepared = prepare(&t[start..end]);
            for fact in sentence_facts(&prepared, min_quote_chars) {
                let holding: Vec<u32> = looked
                    .iter()
                    .filter(|(_, index)| index.holds(&fact.key))
                    .map(|&(n, _)| n)
                    .collect();
                report.facts.push(FactReport {
                    kind: fact.kind,
                    text: t[start + fact.start..start + fact.end].iter().collect(),
                    start: start + fact.start,
                    end: start + fact.end,
                    found: !holding.is_empty(),
                    cited: holding,
                });
            }
            report.polarity = compare(&answer_stance(&prepared), &looked);
            let mismatch = report
                .polarity
                .as_ref()
                .is_some_and(|p| p.answer_negated != p.evidence_negated);
            report.supported = !mismatch && report.facts.iter().all(|f| f.found);
        }
        reports.push(report);
    }
    Ok(reports)
}
